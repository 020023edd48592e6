import{o as e}from"./rolldown-runtime-BCiCTKAo.js";import{V as t,a as n,i as r,l as i,n as a}from"./Problem-CuvfRXt-.js";import{i as o,n as s,r as c}from"./index-C7CeH63O.js";import{t as l}from"./UsageBar-eNUXqMKQ.js";import{a as u}from"./forms-Dl_7drNq.js";/* empty css                    */var d=e(t(),1);function f(e){let t={racks:0,usedUnits:0,totalUnits:0,hosts:0,nodes:0,readyNodes:0,cpuCapacity:0,cpuAllocated:0,memoryCapacityMB:0,memoryAllocatedMB:0};for(let n of e)t.racks+=n.racks,t.usedUnits+=n.usedUnits,t.totalUnits+=n.totalUnits,t.hosts+=n.hosts,t.nodes+=n.capacity.nodes,t.readyNodes+=n.capacity.readyNodes,t.cpuCapacity+=n.capacity.cpuCapacity,t.cpuAllocated+=n.capacity.cpuAllocated,t.memoryCapacityMB+=n.capacity.memoryCapacityMB,t.memoryAllocatedMB+=n.capacity.memoryAllocatedMB;return t}var p=r(),m=n(`
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
`),h=n(`
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
`);function g({id:e,name:t,building:n,phase:r}){let[{data:o,error:u,fetching:d}]=i({query:h,variables:{id:e}}),m=o?.datacenterView,g=m?f(m.floors):null;return(0,p.jsxs)(`div`,{className:`card dc-card`,"data-testid":`datacenter`,children:[(0,p.jsxs)(`div`,{className:`spread`,children:[(0,p.jsx)(`h3`,{children:(0,p.jsx)(c,{to:`/datacenters/${e}`,children:t})}),r&&(0,p.jsx)(`span`,{className:`muted small`,children:r})]}),n&&(0,p.jsx)(`div`,{className:`muted small`,children:n}),d&&!m&&(0,p.jsx)(s,{what:`Loading capacity`}),(0,p.jsx)(a,{error:u}),m&&g&&(0,p.jsxs)(`div`,{className:`dc-stats`,children:[(0,p.jsxs)(`div`,{className:`small`,children:[m.floors.length,` floor`,m.floors.length===1?``:`s`,` · `,g.racks,` racks · `,g.hosts,` devices · `,g.readyNodes,`/`,g.nodes,` nodes ready`]}),(0,p.jsx)(l,{label:`Rack units`,used:g.usedUnits,total:g.totalUnits,unit:`U`}),(0,p.jsx)(l,{label:`vCPU`,used:g.cpuAllocated,total:g.cpuCapacity}),(0,p.jsx)(l,{label:`Memory`,used:g.memoryAllocatedMB,total:g.memoryCapacityMB,size:`MiB`})]})]})}function _(){let[{data:e,error:t,fetching:n}]=i({query:m}),r=e?.regions.edges?.flatMap(e=>e?.node?[e.node]:[])??[],c=o(),[l,f]=(0,d.useState)(!1);return(0,p.jsxs)(`div`,{children:[(0,p.jsxs)(`div`,{className:`row`,children:[(0,p.jsx)(`h1`,{children:`Datacenters`}),r.length>0&&(0,p.jsx)(`button`,{type:`button`,onClick:()=>f(!l),"aria-expanded":l,children:`New datacenter`})]}),l&&(0,p.jsx)(u,{regions:r,onDone:e=>c(`/datacenters/${e}`)}),(0,p.jsx)(a,{error:t}),n&&!e&&(0,p.jsx)(s,{}),e&&r.length===0&&(0,p.jsx)(`p`,{className:`muted`,children:`No regions are visible to you.`}),r.map(e=>{let t=e.datacenters.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,p.jsxs)(`section`,{"aria-label":`Region ${e.name}`,children:[(0,p.jsxs)(`h2`,{className:`row`,children:[e.name,` `,(0,p.jsxs)(`span`,{className:`muted small`,children:[`region `,e.status.toLowerCase()]})]}),t.length===0?(0,p.jsx)(`p`,{className:`muted`,children:`No datacenters in this region.`}):(0,p.jsx)(`div`,{className:`grid`,children:t.map(e=>(0,p.jsx)(g,{...e},e.id))})]},e.id)})]})}export{h as DatacenterCapacityDocument,_ as default,f as t};