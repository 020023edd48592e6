import{i as e,n as t,r as n}from"./index-CX8f7bI1.js";import{a as r,i,l as a,n as o,r as s}from"./Problem-BnMghjZI.js";import{t as c}from"./StatusBadge-Dks2VEsK.js";import{t as l}from"./UsageBar-D9X2fq49.js";import{i as u}from"./layout-L3Xy536Y.js";import{n as d,r as f}from"./format-eix3v1Vw.js";/* empty css                    */var p=i(),m=r(`
  query HostPage($id: ID!) {
    node(id: $id) {
      __typename
      ... on Host {
        id
        name
        description
        kind
        role
        vendor
        model
        serialNumber
        position
        height
        face
        fullDepth
        lifecycle
        cpuModel
        cpuSockets
        cpuCores
        cpuThreads
        memoryMB
        rack { id name floor { id name datacenter { id name } } }
        ports(first: 200) {
          totalCount
          edges {
            node {
              id
              name
              mac
              vlan
              speedMbps
              kind
              ipAddresses(first: 20) { edges { node { id address } } }
              linkA { id status bPort { id name host { id name } } }
              linkB { id status aPort { id name host { id name } } }
            }
          }
        }
        node {
          id
          name
          status
          statusReason
          schedulable
          cordonReason
          cpuCapacity
          cpuAllocated
          memoryCapacityMB
          memoryAllocatedMB
          diskCapacityGB
          diskAllocatedGB
          cluster { id name }
          virtualMachines(first: 100) {
            totalCount
            edges { node { id name status allocatedVcpus allocatedMemoryMB tenant { id name } } }
          }
        }
        maintainers(first: 50) { edges { node { id name email } } }
        maintainerGroups(first: 50) { edges { node { id name } } }
        hostGroups(first: 50) { edges { node { id name } } }
      }
    }
  }
`);function h(e){return e?.flatMap(e=>e?.node?[e.node]:[])??[]}function g(e){return e.linkA?{link:e.linkA,port:e.linkA.bPort}:e.linkB?{link:e.linkB,port:e.linkB.aPort}:null}function _({host:e}){let n=h(e.ports.edges);return n.length===0?(0,p.jsx)(`p`,{className:`muted`,children:`This device has no ports.`}):(0,p.jsxs)(`table`,{"aria-label":`Ports`,children:[(0,p.jsx)(`thead`,{children:(0,p.jsxs)(`tr`,{children:[(0,p.jsx)(`th`,{children:`Port`}),(0,p.jsx)(`th`,{children:`MAC`}),(0,p.jsx)(`th`,{children:`VLAN`}),(0,p.jsx)(`th`,{children:`Speed`}),(0,p.jsx)(`th`,{children:`Link peer`}),(0,p.jsx)(`th`,{children:`IP addresses`}),(0,p.jsx)(`th`,{})]})}),(0,p.jsx)(`tbody`,{children:n.map(e=>{let n=g(e),r=h(e.ipAddresses.edges);return(0,p.jsxs)(`tr`,{"data-testid":`port`,children:[(0,p.jsxs)(`td`,{children:[(0,p.jsx)(`strong`,{children:e.name}),` `,(0,p.jsx)(`span`,{className:`muted small`,children:e.kind.toLowerCase()})]}),(0,p.jsx)(`td`,{children:(0,p.jsx)(`code`,{children:e.mac??`—`})}),(0,p.jsx)(`td`,{children:e.vlan?e.vlan:`—`}),(0,p.jsx)(`td`,{children:e.speedMbps?e.speedMbps>=1e3?`${d(e.speedMbps/1e3,1)} Gb/s`:`${d(e.speedMbps)} Mb/s`:`—`}),(0,p.jsx)(`td`,{children:n?(0,p.jsxs)(p.Fragment,{children:[n.port.host?(0,p.jsx)(t,{to:`/hosts/${n.port.host.id}`,children:n.port.host.name}):(0,p.jsx)(`span`,{className:`muted`,children:`unknown device`}),` `,(0,p.jsx)(`span`,{className:`muted`,children:n.port.name}),` `,(0,p.jsx)(c,{status:n.link.status})]}):(0,p.jsx)(`span`,{className:`muted`,children:`not linked`})}),(0,p.jsx)(`td`,{children:r.length?r.map(e=>e.address).join(`, `):(0,p.jsx)(`span`,{className:`muted`,children:`none`})}),(0,p.jsx)(`td`,{children:(0,p.jsx)(t,{to:`/network/trace/${e.id}`,children:`Trace`})})]},e.id)})})]})}function v({node:e}){let n=h(e.virtualMachines.edges);return(0,p.jsxs)(`div`,{className:`card`,children:[(0,p.jsx)(`h2`,{children:`Compute node`}),(0,p.jsxs)(`div`,{className:`row`,children:[(0,p.jsx)(t,{to:`/nodes/${e.id}`,children:e.name}),(0,p.jsx)(c,{status:e.status,title:e.statusReason}),!e.schedulable&&(0,p.jsx)(c,{status:`CORDONED`,title:e.cordonReason}),(0,p.jsxs)(`span`,{className:`muted small`,children:[`cluster `,(0,p.jsx)(t,{to:`/clusters/${e.cluster.id}`,children:e.cluster.name})]})]}),!e.schedulable&&e.cordonReason&&(0,p.jsxs)(`p`,{className:`small muted`,children:[`Cordoned: `,e.cordonReason]}),(0,p.jsxs)(`div`,{className:`dc-stats`,children:[(0,p.jsx)(l,{label:`vCPU`,used:e.cpuAllocated,total:e.cpuCapacity}),(0,p.jsx)(l,{label:`Memory`,used:e.memoryAllocatedMB,total:e.memoryCapacityMB,size:`MiB`}),(0,p.jsx)(l,{label:`Disk`,used:e.diskAllocatedGB,total:e.diskCapacityGB,size:`GiB`})]}),(0,p.jsxs)(`h3`,{children:[`Virtual machines (`,e.virtualMachines.totalCount,`)`]}),n.length===0?(0,p.jsx)(`p`,{className:`muted small`,children:`No VM runs on this node.`}):(0,p.jsx)(`ul`,{className:`small`,style:{paddingLeft:`1.1rem`,margin:0},children:n.map(e=>(0,p.jsxs)(`li`,{children:[(0,p.jsx)(t,{to:`/vms/${e.id}`,children:e.name}),` `,(0,p.jsx)(c,{status:e.status}),` `,(0,p.jsxs)(`span`,{className:`muted`,children:[e.allocatedVcpus,` vCPU, `,f(e.allocatedMemoryMB,`MiB`),` · `,(0,p.jsx)(t,{to:`/tenants/${e.tenant.id}`,children:e.tenant.name})]})]},e.id))})]})}function y(){let{id:r=``}=e(),i=n(),[{data:l,error:d,fetching:g}]=a({query:m,variables:{id:r}}),y=l?.node,b=y&&y.__typename===`Host`?y:null;if(!b)return(0,p.jsxs)(`div`,{children:[(0,p.jsx)(`nav`,{className:`breadcrumbs`,"aria-label":`Breadcrumbs`,children:(0,p.jsx)(t,{to:`/datacenters`,children:`Datacenters`})}),(0,p.jsx)(`h1`,{children:`Device`}),(0,p.jsx)(o,{error:d}),g&&!l&&(0,p.jsx)(s,{}),l&&!d&&(0,p.jsx)(`p`,{className:`muted`,children:`There is no device with this id, or you may not see it.`})]});let x=b.rack,S=h(b.maintainers.edges),C=h(b.maintainerGroups.edges),w=h(b.hostGroups.edges);return(0,p.jsxs)(`div`,{children:[(0,p.jsxs)(`nav`,{className:`breadcrumbs`,"aria-label":`Breadcrumbs`,children:[(0,p.jsx)(t,{to:`/datacenters`,children:`Datacenters`}),x&&(0,p.jsxs)(p.Fragment,{children:[(0,p.jsx)(t,{to:`/datacenters/${x.floor.datacenter.id}`,children:x.floor.datacenter.name}),(0,p.jsx)(t,{to:`/floors/${x.floor.id}`,children:x.floor.name}),(0,p.jsx)(t,{to:`/racks/${x.id}`,children:x.name})]}),(0,p.jsx)(`span`,{children:b.name})]}),(0,p.jsxs)(`div`,{className:`spread`,children:[(0,p.jsxs)(`div`,{className:`rack-title`,children:[(0,p.jsx)(`h1`,{children:b.name}),(0,p.jsx)(c,{status:b.lifecycle===`ACTIVE`?`ACTIVE`:b.lifecycle})]}),(0,p.jsx)(`button`,{type:`button`,className:`primary`,onClick:()=>i(`/network?from=${encodeURIComponent(b.id)}`),children:`Network map`})]}),(0,p.jsx)(o,{error:d}),(0,p.jsxs)(`div`,{className:`host-grid`,children:[(0,p.jsxs)(`div`,{className:`card`,children:[(0,p.jsx)(`h2`,{children:`Device`}),(0,p.jsxs)(`dl`,{className:`host-facts`,children:[(0,p.jsx)(`dt`,{children:`Kind`}),(0,p.jsxs)(`dd`,{children:[b.kind.toLowerCase(),b.role?` · ${b.role.replace(/_/g,` `).toLowerCase()}`:``]}),(0,p.jsx)(`dt`,{children:`Model`}),(0,p.jsx)(`dd`,{children:[b.vendor,b.model].filter(Boolean).join(` `)||`—`}),(0,p.jsx)(`dt`,{children:`Serial`}),(0,p.jsx)(`dd`,{children:b.serialNumber??`—`}),(0,p.jsx)(`dt`,{children:`Rack`}),(0,p.jsxs)(`dd`,{children:[x?(0,p.jsx)(t,{to:`/racks/${x.id}`,children:x.name}):`not racked`,` · `,u(b.position,b.height),` · `,b.face.toLowerCase(),`,`,` `,b.fullDepth?`full depth`:`half depth`]}),b.cpuModel&&(0,p.jsxs)(p.Fragment,{children:[(0,p.jsx)(`dt`,{children:`CPU`}),(0,p.jsxs)(`dd`,{children:[b.cpuSockets,` × `,b.cpuModel,` (`,b.cpuCores,` cores, `,b.cpuThreads,` threads)`]})]}),b.memoryMB>0&&(0,p.jsxs)(p.Fragment,{children:[(0,p.jsx)(`dt`,{children:`Memory`}),(0,p.jsx)(`dd`,{children:f(b.memoryMB,`MiB`)})]}),(0,p.jsx)(`dt`,{children:`Maintainers`}),(0,p.jsxs)(`dd`,{children:[S.length||C.length?[...S.map(e=>e.name),...C.map(e=>`${e.name} (group)`)].join(`, `):`none`,` `,(0,p.jsx)(t,{to:`/maintainers`,className:`small`,children:`all maintainers`})]}),(0,p.jsx)(`dt`,{children:`Host groups`}),(0,p.jsx)(`dd`,{children:w.length?w.map(e=>e.name).join(`, `):`none`})]}),b.description&&(0,p.jsx)(`p`,{className:`small`,children:b.description})]}),b.node?(0,p.jsx)(v,{node:b.node}):(0,p.jsxs)(`div`,{className:`card`,children:[(0,p.jsx)(`h2`,{children:`Compute node`}),(0,p.jsx)(`p`,{className:`muted`,children:`This device is not a compute node.`})]})]}),(0,p.jsxs)(`h2`,{children:[`Ports (`,b.ports.totalCount,`)`]}),(0,p.jsx)(_,{host:b})]})}export{y as default};