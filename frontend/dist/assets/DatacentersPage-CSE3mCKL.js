import{n as e}from"./index-B_Yz7f47.js";import{a as t,i as n,n as r,o as i,u as a}from"./Problem-_3LBNcXe.js";import{t as o}from"./UsageBar-Dz2r5Gz8.js";/* empty css                    */function s(e){let t={racks:0,usedUnits:0,totalUnits:0,hosts:0,nodes:0,readyNodes:0,cpuCapacity:0,cpuAllocated:0,memoryCapacityMB:0,memoryAllocatedMB:0};for(let n of e)t.racks+=n.racks,t.usedUnits+=n.usedUnits,t.totalUnits+=n.totalUnits,t.hosts+=n.hosts,t.nodes+=n.capacity.nodes,t.readyNodes+=n.capacity.readyNodes,t.cpuCapacity+=n.capacity.cpuCapacity,t.cpuAllocated+=n.capacity.cpuAllocated,t.memoryCapacityMB+=n.capacity.memoryCapacityMB,t.memoryAllocatedMB+=n.capacity.memoryAllocatedMB;return t}var c=e=>Math.round(e/1024),l=t(),u=i(`
  query DatacenterRegions {
    regions(first: 100) {
      edges {
        node {
          id
          name
          status
          datacenters(first: 100) {
            edges { node { id name building phase } }
          }
        }
      }
    }
  }
`),d=i(`
  query DatacenterCapacity($id: ID!) {
    datacenterView(id: $id) {
      id
      name
      regionName
      floors {
        id
        name
        racks
        usedUnits
        totalUnits
        hosts
        capacity { nodes readyNodes cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB diskCapacityGB diskAllocatedGB }
        alerts { fatal critical warning worst }
      }
      clusters { id name vmCount capacity { nodes readyNodes cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB } }
    }
  }
`);function f({id:t,name:i,building:u,phase:f}){let[{data:p,error:m,fetching:h}]=a({query:d,variables:{id:t}}),g=p?.datacenterView,_=g?s(g.floors):null;return(0,l.jsxs)(`div`,{className:`card dc-card`,"data-testid":`datacenter`,children:[(0,l.jsxs)(`div`,{className:`spread`,children:[(0,l.jsx)(`h3`,{children:(0,l.jsx)(e,{to:`/datacenters/${t}`,children:i})}),f&&(0,l.jsx)(`span`,{className:`muted small`,children:f})]}),u&&(0,l.jsx)(`div`,{className:`muted small`,children:u}),h&&!g&&(0,l.jsx)(n,{what:`Loading capacity`}),(0,l.jsx)(r,{error:m}),g&&_&&(0,l.jsxs)(`div`,{className:`dc-stats`,children:[(0,l.jsxs)(`div`,{className:`small`,children:[g.floors.length,` floor`,g.floors.length===1?``:`s`,` · `,_.racks,` racks · `,_.hosts,` devices · `,_.readyNodes,`/`,_.nodes,` nodes ready`]}),(0,l.jsx)(o,{label:`Rack units`,used:_.usedUnits,total:_.totalUnits,unit:`U`}),(0,l.jsx)(o,{label:`vCPU`,used:_.cpuAllocated,total:_.cpuCapacity}),(0,l.jsx)(o,{label:`Memory`,used:c(_.memoryAllocatedMB),total:c(_.memoryCapacityMB),unit:`GiB`})]})]})}function p(){let[{data:e,error:t,fetching:i}]=a({query:u}),o=e?.regions.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,l.jsxs)(`div`,{children:[(0,l.jsx)(`h1`,{children:`Datacenters`}),(0,l.jsx)(r,{error:t}),i&&!e&&(0,l.jsx)(n,{}),e&&o.length===0&&(0,l.jsx)(`p`,{className:`muted`,children:`No regions are visible to you.`}),o.map(e=>{let t=e.datacenters.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,l.jsxs)(`section`,{"aria-label":`Region ${e.name}`,children:[(0,l.jsxs)(`h2`,{className:`row`,children:[e.name,` `,(0,l.jsxs)(`span`,{className:`muted small`,children:[`region `,e.status.toLowerCase()]})]}),t.length===0?(0,l.jsx)(`p`,{className:`muted`,children:`No datacenters in this region.`}):(0,l.jsx)(`div`,{className:`grid`,children:t.map(e=>(0,l.jsx)(f,{...e},e.id))})]},e.id)})]})}export{d as DatacenterCapacityDocument,p as default,s as n,c as t};