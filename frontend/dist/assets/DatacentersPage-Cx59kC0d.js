import{n as e}from"./index-CX8f7bI1.js";import{a as t,i as n,l as r,n as i,r as a}from"./Problem-BnMghjZI.js";import{t as o}from"./UsageBar-D9X2fq49.js";/* empty css                    */function s(e){let t={racks:0,usedUnits:0,totalUnits:0,hosts:0,nodes:0,readyNodes:0,cpuCapacity:0,cpuAllocated:0,memoryCapacityMB:0,memoryAllocatedMB:0};for(let n of e)t.racks+=n.racks,t.usedUnits+=n.usedUnits,t.totalUnits+=n.totalUnits,t.hosts+=n.hosts,t.nodes+=n.capacity.nodes,t.readyNodes+=n.capacity.readyNodes,t.cpuCapacity+=n.capacity.cpuCapacity,t.cpuAllocated+=n.capacity.cpuAllocated,t.memoryCapacityMB+=n.capacity.memoryCapacityMB,t.memoryAllocatedMB+=n.capacity.memoryAllocatedMB;return t}var c=n(),l=t(`
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
`),u=t(`
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
`);function d({id:t,name:n,building:l,phase:d}){let[{data:f,error:p,fetching:m}]=r({query:u,variables:{id:t}}),h=f?.datacenterView,g=h?s(h.floors):null;return(0,c.jsxs)(`div`,{className:`card dc-card`,"data-testid":`datacenter`,children:[(0,c.jsxs)(`div`,{className:`spread`,children:[(0,c.jsx)(`h3`,{children:(0,c.jsx)(e,{to:`/datacenters/${t}`,children:n})}),d&&(0,c.jsx)(`span`,{className:`muted small`,children:d})]}),l&&(0,c.jsx)(`div`,{className:`muted small`,children:l}),m&&!h&&(0,c.jsx)(a,{what:`Loading capacity`}),(0,c.jsx)(i,{error:p}),h&&g&&(0,c.jsxs)(`div`,{className:`dc-stats`,children:[(0,c.jsxs)(`div`,{className:`small`,children:[h.floors.length,` floor`,h.floors.length===1?``:`s`,` · `,g.racks,` racks · `,g.hosts,` devices · `,g.readyNodes,`/`,g.nodes,` nodes ready`]}),(0,c.jsx)(o,{label:`Rack units`,used:g.usedUnits,total:g.totalUnits,unit:`U`}),(0,c.jsx)(o,{label:`vCPU`,used:g.cpuAllocated,total:g.cpuCapacity}),(0,c.jsx)(o,{label:`Memory`,used:g.memoryAllocatedMB,total:g.memoryCapacityMB,size:`MiB`})]})]})}function f(){let[{data:e,error:t,fetching:n}]=r({query:l}),o=e?.regions.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,c.jsxs)(`div`,{children:[(0,c.jsx)(`h1`,{children:`Datacenters`}),(0,c.jsx)(i,{error:t}),n&&!e&&(0,c.jsx)(a,{}),e&&o.length===0&&(0,c.jsx)(`p`,{className:`muted`,children:`No regions are visible to you.`}),o.map(e=>{let t=e.datacenters.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,c.jsxs)(`section`,{"aria-label":`Region ${e.name}`,children:[(0,c.jsxs)(`h2`,{className:`row`,children:[e.name,` `,(0,c.jsxs)(`span`,{className:`muted small`,children:[`region `,e.status.toLowerCase()]})]}),t.length===0?(0,c.jsx)(`p`,{className:`muted`,children:`No datacenters in this region.`}):(0,c.jsx)(`div`,{className:`grid`,children:t.map(e=>(0,c.jsx)(d,{...e},e.id))})]},e.id)})]})}export{u as DatacenterCapacityDocument,f as default,s as t};