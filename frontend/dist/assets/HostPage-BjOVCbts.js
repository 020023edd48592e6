import{i as e,n as t,r as n}from"./index-B_Yz7f47.js";import{a as r,i,n as a,o,u as s}from"./Problem-_3LBNcXe.js";import{t as c}from"./StatusBadge-BGHzLumg.js";import{t as l}from"./UsageBar-Dz2r5Gz8.js";import{i as u}from"./layout-L3Xy536Y.js";import{n as d}from"./types-SUAeNC8C.js";/* empty css                    */var f=r(),p=o(`
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
`);function m(e){return e?.flatMap(e=>e?.node?[e.node]:[])??[]}function h(e){return e.linkA?{link:e.linkA,port:e.linkA.bPort}:e.linkB?{link:e.linkB,port:e.linkB.aPort}:null}function g({host:e}){let n=m(e.ports.edges);return n.length===0?(0,f.jsx)(`p`,{className:`muted`,children:`This device has no ports.`}):(0,f.jsxs)(`table`,{"aria-label":`Ports`,children:[(0,f.jsx)(`thead`,{children:(0,f.jsxs)(`tr`,{children:[(0,f.jsx)(`th`,{children:`Port`}),(0,f.jsx)(`th`,{children:`MAC`}),(0,f.jsx)(`th`,{children:`VLAN`}),(0,f.jsx)(`th`,{children:`Speed`}),(0,f.jsx)(`th`,{children:`Link peer`}),(0,f.jsx)(`th`,{children:`IP addresses`}),(0,f.jsx)(`th`,{})]})}),(0,f.jsx)(`tbody`,{children:n.map(e=>{let n=h(e),r=m(e.ipAddresses.edges);return(0,f.jsxs)(`tr`,{"data-testid":`port`,children:[(0,f.jsxs)(`td`,{children:[(0,f.jsx)(`strong`,{children:e.name}),` `,(0,f.jsx)(`span`,{className:`muted small`,children:e.kind.toLowerCase()})]}),(0,f.jsx)(`td`,{children:(0,f.jsx)(`code`,{children:e.mac??`—`})}),(0,f.jsx)(`td`,{children:e.vlan?e.vlan:`—`}),(0,f.jsx)(`td`,{children:e.speedMbps?e.speedMbps>=1e3?`${e.speedMbps/1e3} Gb/s`:`${e.speedMbps} Mb/s`:`—`}),(0,f.jsx)(`td`,{children:n?(0,f.jsxs)(f.Fragment,{children:[n.port.host?(0,f.jsx)(t,{to:`/hosts/${n.port.host.id}`,children:n.port.host.name}):(0,f.jsx)(`span`,{className:`muted`,children:`unknown device`}),` `,(0,f.jsx)(`span`,{className:`muted`,children:n.port.name}),` `,(0,f.jsx)(c,{status:n.link.status})]}):(0,f.jsx)(`span`,{className:`muted`,children:`not linked`})}),(0,f.jsx)(`td`,{children:r.length?r.map(e=>e.address).join(`, `):(0,f.jsx)(`span`,{className:`muted`,children:`none`})}),(0,f.jsx)(`td`,{children:(0,f.jsx)(t,{to:`/network/trace/${e.id}`,children:`Trace`})})]},e.id)})})]})}function _({node:e}){let n=m(e.virtualMachines.edges);return(0,f.jsxs)(`div`,{className:`card`,children:[(0,f.jsx)(`h2`,{children:`Compute node`}),(0,f.jsxs)(`div`,{className:`row`,children:[(0,f.jsx)(t,{to:`/nodes/${e.id}`,children:e.name}),(0,f.jsx)(c,{status:e.status,title:e.statusReason}),!e.schedulable&&(0,f.jsx)(c,{status:`CORDONED`,title:e.cordonReason}),(0,f.jsxs)(`span`,{className:`muted small`,children:[`cluster `,(0,f.jsx)(t,{to:`/clusters/${e.cluster.id}`,children:e.cluster.name})]})]}),!e.schedulable&&e.cordonReason&&(0,f.jsxs)(`p`,{className:`small muted`,children:[`Cordoned: `,e.cordonReason]}),(0,f.jsxs)(`div`,{className:`dc-stats`,children:[(0,f.jsx)(l,{label:`vCPU`,used:e.cpuAllocated,total:e.cpuCapacity}),(0,f.jsx)(l,{label:`Memory`,used:Math.round(e.memoryAllocatedMB/1024),total:Math.round(e.memoryCapacityMB/1024),unit:`GiB`}),(0,f.jsx)(l,{label:`Disk`,used:e.diskAllocatedGB,total:e.diskCapacityGB,unit:`GB`})]}),(0,f.jsxs)(`h3`,{children:[`Virtual machines (`,e.virtualMachines.totalCount,`)`]}),n.length===0?(0,f.jsx)(`p`,{className:`muted small`,children:`No VM runs on this node.`}):(0,f.jsx)(`ul`,{className:`small`,style:{paddingLeft:`1.1rem`,margin:0},children:n.map(e=>(0,f.jsxs)(`li`,{children:[(0,f.jsx)(t,{to:`/vms/${e.id}`,children:e.name}),` `,(0,f.jsx)(c,{status:e.status}),` `,(0,f.jsxs)(`span`,{className:`muted`,children:[e.allocatedVcpus,` vCPU, `,d(e.allocatedMemoryMB),` · `,(0,f.jsx)(t,{to:`/tenants/${e.tenant.id}`,children:e.tenant.name})]})]},e.id))})]})}function v(){let{id:r=``}=e(),o=n(),[{data:l,error:h,fetching:v}]=s({query:p,variables:{id:r}}),y=l?.node,b=y&&y.__typename===`Host`?y:null;if(!b)return(0,f.jsxs)(`div`,{children:[(0,f.jsx)(`nav`,{className:`breadcrumbs`,"aria-label":`Breadcrumbs`,children:(0,f.jsx)(t,{to:`/datacenters`,children:`Datacenters`})}),(0,f.jsx)(`h1`,{children:`Device`}),(0,f.jsx)(a,{error:h}),v&&!l&&(0,f.jsx)(i,{}),l&&!h&&(0,f.jsx)(`p`,{className:`muted`,children:`There is no device with this id, or you may not see it.`})]});let x=b.rack,S=m(b.maintainers.edges),C=m(b.maintainerGroups.edges),w=m(b.hostGroups.edges);return(0,f.jsxs)(`div`,{children:[(0,f.jsxs)(`nav`,{className:`breadcrumbs`,"aria-label":`Breadcrumbs`,children:[(0,f.jsx)(t,{to:`/datacenters`,children:`Datacenters`}),x&&(0,f.jsxs)(f.Fragment,{children:[(0,f.jsx)(t,{to:`/datacenters/${x.floor.datacenter.id}`,children:x.floor.datacenter.name}),(0,f.jsx)(t,{to:`/floors/${x.floor.id}`,children:x.floor.name}),(0,f.jsx)(t,{to:`/racks/${x.id}`,children:x.name})]}),(0,f.jsx)(`span`,{children:b.name})]}),(0,f.jsxs)(`div`,{className:`spread`,children:[(0,f.jsxs)(`div`,{className:`rack-title`,children:[(0,f.jsx)(`h1`,{children:b.name}),(0,f.jsx)(c,{status:b.lifecycle===`ACTIVE`?`ACTIVE`:b.lifecycle})]}),(0,f.jsx)(`button`,{type:`button`,className:`primary`,onClick:()=>o(`/network?from=${encodeURIComponent(b.id)}`),children:`Network map`})]}),(0,f.jsx)(a,{error:h}),(0,f.jsxs)(`div`,{className:`host-grid`,children:[(0,f.jsxs)(`div`,{className:`card`,children:[(0,f.jsx)(`h2`,{children:`Device`}),(0,f.jsxs)(`dl`,{className:`host-facts`,children:[(0,f.jsx)(`dt`,{children:`Kind`}),(0,f.jsxs)(`dd`,{children:[b.kind.toLowerCase(),b.role?` · ${b.role.replace(/_/g,` `).toLowerCase()}`:``]}),(0,f.jsx)(`dt`,{children:`Model`}),(0,f.jsx)(`dd`,{children:[b.vendor,b.model].filter(Boolean).join(` `)||`—`}),(0,f.jsx)(`dt`,{children:`Serial`}),(0,f.jsx)(`dd`,{children:b.serialNumber??`—`}),(0,f.jsx)(`dt`,{children:`Rack`}),(0,f.jsxs)(`dd`,{children:[x?(0,f.jsx)(t,{to:`/racks/${x.id}`,children:x.name}):`not racked`,` · `,u(b.position,b.height),` · `,b.face.toLowerCase(),`,`,` `,b.fullDepth?`full depth`:`half depth`]}),b.cpuModel&&(0,f.jsxs)(f.Fragment,{children:[(0,f.jsx)(`dt`,{children:`CPU`}),(0,f.jsxs)(`dd`,{children:[b.cpuSockets,` × `,b.cpuModel,` (`,b.cpuCores,` cores, `,b.cpuThreads,` threads)`]})]}),b.memoryMB>0&&(0,f.jsxs)(f.Fragment,{children:[(0,f.jsx)(`dt`,{children:`Memory`}),(0,f.jsx)(`dd`,{children:d(b.memoryMB)})]}),(0,f.jsx)(`dt`,{children:`Maintainers`}),(0,f.jsxs)(`dd`,{children:[S.length||C.length?[...S.map(e=>e.name),...C.map(e=>`${e.name} (group)`)].join(`, `):`none`,` `,(0,f.jsx)(t,{to:`/maintainers`,className:`small`,children:`all maintainers`})]}),(0,f.jsx)(`dt`,{children:`Host groups`}),(0,f.jsx)(`dd`,{children:w.length?w.map(e=>e.name).join(`, `):`none`})]}),b.description&&(0,f.jsx)(`p`,{className:`small`,children:b.description})]}),b.node?(0,f.jsx)(_,{node:b.node}):(0,f.jsxs)(`div`,{className:`card`,children:[(0,f.jsx)(`h2`,{children:`Compute node`}),(0,f.jsx)(`p`,{className:`muted`,children:`This device is not a compute node.`})]})]}),(0,f.jsxs)(`h2`,{children:[`Ports (`,b.ports.totalCount,`)`]}),(0,f.jsx)(g,{host:b})]})}export{v as default};