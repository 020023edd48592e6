import{o as e}from"./rolldown-runtime-BCiCTKAo.js";import{a as t,i as n,n as r,r as i}from"./index-C7CeH63O.js";import{V as a,a as o,c as s,i as c,l,n as u}from"./Problem-CuvfRXt-.js";import{t as d}from"./StatusBadge-DhLBs1VX.js";import{t as f}from"./UsageBar-eNUXqMKQ.js";import{i as p}from"./layout-L3Xy536Y.js";import{n as m,r as h}from"./format-eix3v1Vw.js";import{t as g}from"./HistoryLink-GMxRxGTH.js";import{i as _,o as v,r as y}from"./deletes-Dp7fC0aI.js";import{n as b,s as x,t as S}from"./forms-Dl_7drNq.js";/* empty css                    */var C=e(a(),1),w=c(),T=o(`
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
`);function E(e){return e?.flatMap(e=>e?.node?[e.node]:[])??[]}function D(e){return e.linkA?{link:e.linkA,port:e.linkA.bPort}:e.linkB?{link:e.linkB,port:e.linkB.aPort}:null}function O({host:e,onChanged:t}){let[n,r]=s(_),a=E(e.ports.edges);return a.length===0?(0,w.jsx)(`p`,{className:`muted`,children:`This device has no ports.`}):(0,w.jsxs)(`table`,{"aria-label":`Ports`,children:[(0,w.jsx)(`thead`,{children:(0,w.jsxs)(`tr`,{children:[(0,w.jsx)(`th`,{children:`Port`}),(0,w.jsx)(`th`,{children:`MAC`}),(0,w.jsx)(`th`,{children:`VLAN`}),(0,w.jsx)(`th`,{children:`Speed`}),(0,w.jsx)(`th`,{children:`Link peer`}),(0,w.jsx)(`th`,{children:`IP addresses`}),(0,w.jsx)(`th`,{})]})}),(0,w.jsx)(`tbody`,{children:a.map(e=>{let a=D(e),o=E(e.ipAddresses.edges);return(0,w.jsxs)(`tr`,{"data-testid":`port`,children:[(0,w.jsxs)(`td`,{children:[(0,w.jsx)(`strong`,{children:e.name}),` `,(0,w.jsx)(`span`,{className:`muted small`,children:e.kind.toLowerCase()})]}),(0,w.jsx)(`td`,{children:(0,w.jsx)(`code`,{children:e.mac??`—`})}),(0,w.jsx)(`td`,{children:e.vlan?e.vlan:`—`}),(0,w.jsx)(`td`,{children:e.speedMbps?e.speedMbps>=1e3?`${m(e.speedMbps/1e3,1)} Gb/s`:`${m(e.speedMbps)} Mb/s`:`—`}),(0,w.jsx)(`td`,{children:a?(0,w.jsxs)(w.Fragment,{children:[a.port.host?(0,w.jsx)(i,{to:`/hosts/${a.port.host.id}`,children:a.port.host.name}):(0,w.jsx)(`span`,{className:`muted`,children:`unknown device`}),` `,(0,w.jsx)(`span`,{className:`muted`,children:a.port.name}),` `,(0,w.jsx)(d,{status:a.link.status})]}):(0,w.jsx)(`span`,{className:`muted`,children:`not linked`})}),(0,w.jsx)(`td`,{children:o.length?o.map(e=>e.address).join(`, `):(0,w.jsx)(`span`,{className:`muted`,children:`none`})}),(0,w.jsxs)(`td`,{children:[(0,w.jsx)(i,{to:`/network/trace/${e.id}`,children:`Trace`}),a&&(0,w.jsxs)(w.Fragment,{children:[` `,(0,w.jsx)(`button`,{type:`button`,className:`link`,disabled:n.fetching,"aria-label":`Disconnect ${e.name}`,onClick:async()=>{let n=a.port.host?`${a.port.host.name} ${a.port.name}`:a.port.name;window.confirm(`Disconnect the cable from ${e.name} to ${n}? The cable record is deleted.`)&&((await r({id:a.link.id})).error||t())},children:`Disconnect`})]})]})]},e.id)})})]})}function k(e){return E(e.ports.edges).filter(e=>!e.linkA&&!e.linkB)}function A({node:e}){let t=E(e.virtualMachines.edges);return(0,w.jsxs)(`div`,{className:`card`,children:[(0,w.jsx)(`h2`,{children:`Compute node`}),(0,w.jsxs)(`div`,{className:`row`,children:[(0,w.jsx)(i,{to:`/nodes/${e.id}`,children:e.name}),(0,w.jsx)(d,{status:e.status,title:e.statusReason}),!e.schedulable&&(0,w.jsx)(d,{status:`CORDONED`,title:e.cordonReason}),(0,w.jsxs)(`span`,{className:`muted small`,children:[`cluster `,(0,w.jsx)(i,{to:`/clusters/${e.cluster.id}`,children:e.cluster.name})]})]}),!e.schedulable&&e.cordonReason&&(0,w.jsxs)(`p`,{className:`small muted`,children:[`Cordoned: `,e.cordonReason]}),(0,w.jsxs)(`div`,{className:`dc-stats`,children:[(0,w.jsx)(f,{label:`vCPU`,used:e.cpuAllocated,total:e.cpuCapacity}),(0,w.jsx)(f,{label:`Memory`,used:e.memoryAllocatedMB,total:e.memoryCapacityMB,size:`MiB`}),(0,w.jsx)(f,{label:`Disk`,used:e.diskAllocatedGB,total:e.diskCapacityGB,size:`GiB`})]}),(0,w.jsxs)(`h3`,{children:[`Virtual machines (`,m(e.virtualMachines.totalCount),`)`]}),t.length===0?(0,w.jsx)(`p`,{className:`muted small`,children:`No VM runs on this node.`}):(0,w.jsx)(`ul`,{className:`small`,style:{paddingLeft:`1.1rem`,margin:0},children:t.map(e=>(0,w.jsxs)(`li`,{children:[(0,w.jsx)(i,{to:`/vms/${e.id}`,children:e.name}),` `,(0,w.jsx)(d,{status:e.status}),` `,(0,w.jsxs)(`span`,{className:`muted`,children:[m(e.allocatedVcpus),` vCPU, `,h(e.allocatedMemoryMB,`MiB`),` · `,(0,w.jsx)(i,{to:`/tenants/${e.tenant.id}`,children:e.tenant.name})]})]},e.id))})]})}function j(){let{id:e=``}=t(),a=n(),[{data:o,error:c,fetching:f},_]=l({query:T,variables:{id:e}}),[,D]=s(y),[j,M]=(0,C.useState)(!1),N=()=>_({requestPolicy:`network-only`}),P=o?.node,F=P&&P.__typename===`Host`?P:null;if(!F)return(0,w.jsxs)(`div`,{children:[(0,w.jsx)(`nav`,{className:`breadcrumbs`,"aria-label":`Breadcrumbs`,children:(0,w.jsx)(i,{to:`/datacenters`,children:`Datacenters`})}),(0,w.jsx)(`h1`,{children:`Device`}),(0,w.jsx)(u,{error:c}),f&&!o&&(0,w.jsx)(r,{}),o&&!c&&(0,w.jsx)(`p`,{className:`muted`,children:`There is no device with this id, or you may not see it.`})]});let I=F.rack,L=E(F.maintainers.edges),R=E(F.maintainerGroups.edges),z=E(F.hostGroups.edges);return(0,w.jsxs)(`div`,{children:[(0,w.jsxs)(`nav`,{className:`breadcrumbs`,"aria-label":`Breadcrumbs`,children:[(0,w.jsx)(i,{to:`/datacenters`,children:`Datacenters`}),I&&(0,w.jsxs)(w.Fragment,{children:[(0,w.jsx)(i,{to:`/datacenters/${I.floor.datacenter.id}`,children:I.floor.datacenter.name}),(0,w.jsx)(i,{to:`/floors/${I.floor.id}`,children:I.floor.name}),(0,w.jsx)(i,{to:`/racks/${I.id}`,children:I.name})]}),(0,w.jsx)(`span`,{children:F.name})]}),(0,w.jsxs)(`div`,{className:`spread`,children:[(0,w.jsxs)(`div`,{className:`rack-title`,children:[(0,w.jsx)(`h1`,{children:F.name}),(0,w.jsx)(d,{status:F.lifecycle===`ACTIVE`?`ACTIVE`:F.lifecycle})]}),(0,w.jsxs)(`div`,{className:`row`,children:[(0,w.jsx)(g,{type:`Host`,id:F.id}),(0,w.jsx)(`button`,{type:`button`,onClick:()=>M(!j),"aria-expanded":j,children:`Edit device`}),(0,w.jsx)(v,{what:`device ${F.name}`,onDelete:()=>D({id:F.id}),onDone:()=>a(I?`/racks/${I.id}`:`/datacenters`)}),(0,w.jsx)(`button`,{type:`button`,className:`primary`,onClick:()=>a(`/network?from=${encodeURIComponent(F.id)}`),children:`Network map`})]})]}),(0,w.jsx)(u,{error:c}),(0,w.jsxs)(`div`,{className:`host-grid`,children:[(0,w.jsxs)(`div`,{className:`card`,children:[(0,w.jsx)(`h2`,{children:`Device`}),(0,w.jsxs)(`dl`,{className:`host-facts`,children:[(0,w.jsx)(`dt`,{children:`Kind`}),(0,w.jsxs)(`dd`,{children:[F.kind.toLowerCase(),F.role?` · ${F.role.replace(/_/g,` `).toLowerCase()}`:``]}),(0,w.jsx)(`dt`,{children:`Model`}),(0,w.jsx)(`dd`,{children:[F.vendor,F.model].filter(Boolean).join(` `)||`—`}),(0,w.jsx)(`dt`,{children:`Serial`}),(0,w.jsx)(`dd`,{children:F.serialNumber??`—`}),(0,w.jsx)(`dt`,{children:`Rack`}),(0,w.jsxs)(`dd`,{children:[I?(0,w.jsx)(i,{to:`/racks/${I.id}`,children:I.name}):`not racked`,` · `,p(F.position,F.height),` · `,F.face.toLowerCase(),`,`,` `,F.fullDepth?`full depth`:`half depth`]}),F.cpuModel&&(0,w.jsxs)(w.Fragment,{children:[(0,w.jsx)(`dt`,{children:`CPU`}),(0,w.jsxs)(`dd`,{children:[F.cpuSockets,` × `,F.cpuModel,` (`,F.cpuCores,` cores, `,F.cpuThreads,` threads)`]})]}),F.memoryMB>0&&(0,w.jsxs)(w.Fragment,{children:[(0,w.jsx)(`dt`,{children:`Memory`}),(0,w.jsx)(`dd`,{children:h(F.memoryMB,`MiB`)})]}),(0,w.jsx)(`dt`,{children:`Maintainers`}),(0,w.jsxs)(`dd`,{children:[L.length||R.length?[...L.map(e=>e.name),...R.map(e=>`${e.name} (group)`)].join(`, `):`none`,` `,(0,w.jsx)(i,{to:`/maintainers`,className:`small`,children:`all maintainers`})]}),(0,w.jsx)(`dt`,{children:`Host groups`}),(0,w.jsx)(`dd`,{children:z.length?z.map(e=>e.name).join(`, `):`none`})]}),F.description&&(0,w.jsx)(`p`,{className:`small`,children:F.description})]}),F.node?(0,w.jsx)(A,{node:F.node}):(0,w.jsxs)(`div`,{className:`card`,children:[(0,w.jsx)(`h2`,{children:`Compute node`}),(0,w.jsx)(`p`,{className:`muted`,children:`This device is not a compute node.`})]})]}),(0,w.jsxs)(`h2`,{children:[`Ports (`,m(F.ports.totalCount),`)`]}),(0,w.jsx)(O,{host:F,onChanged:N}),(0,w.jsxs)(`div`,{className:`grid dcim-forms`,style:{marginTop:`1rem`},children:[(0,w.jsx)(x,{hostID:F.id,onDone:N}),(0,w.jsx)(S,{ports:k(F),onDone:e=>a(`/network/trace/${e}`)})]}),j&&(0,w.jsx)(b,{host:F,onDone:N})]})}export{j as default};