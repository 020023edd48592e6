import{n as e,r as t}from"./index-C7CeH63O.js";import{a as n,i as r,l as i,n as a}from"./Problem-CuvfRXt-.js";import{n as o,t as s}from"./Pager-DszbZHWS.js";import{i as c}from"./policy-CLxkNnu6.js";import{n as l}from"./format-eix3v1Vw.js";var u=r(),d=n(`
  query Clusters($first: Int, $after: Cursor, $last: Int, $before: Cursor) {
    clusters(first: $first, after: $after, last: $last, before: $before, orderBy: { field: NAME }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          id name labels weight
          region { id name }
          datacenter { id name }
          nodes { totalCount }
          virtualMachines(where: { statusNEQ: DELETED }) { totalCount }
        }
      }
    }
  }
`);function f(){let n=o(25),[{data:r,error:f,fetching:p}]=i({query:d,variables:n.vars}),m=(r?.clusters.edges??[]).flatMap(e=>e?.node?[e.node]:[]);return(0,u.jsxs)(`div`,{children:[(0,u.jsx)(`h1`,{children:`Clusters`}),(0,u.jsx)(a,{error:f}),!r&&p&&(0,u.jsx)(e,{what:`Loading clusters`}),r&&m.length===0&&(0,u.jsx)(`p`,{className:`muted`,children:`No clusters yet.`}),m.length>0&&(0,u.jsxs)(`table`,{"aria-label":`Clusters`,children:[(0,u.jsx)(`thead`,{children:(0,u.jsxs)(`tr`,{children:[(0,u.jsx)(`th`,{children:`Cluster`}),(0,u.jsx)(`th`,{children:`Region`}),(0,u.jsx)(`th`,{children:`Datacenter`}),(0,u.jsx)(`th`,{children:`Nodes`}),(0,u.jsx)(`th`,{children:`VMs`}),(0,u.jsx)(`th`,{children:`Labels`})]})}),(0,u.jsx)(`tbody`,{children:m.map(e=>(0,u.jsxs)(`tr`,{children:[(0,u.jsx)(`td`,{children:(0,u.jsx)(t,{to:`/clusters/${e.id}`,children:e.name})}),(0,u.jsx)(`td`,{children:e.region.name}),(0,u.jsx)(`td`,{children:(0,u.jsx)(t,{to:`/datacenters/${e.datacenter.id}`,children:e.datacenter.name})}),(0,u.jsx)(`td`,{children:l(e.nodes.totalCount)}),(0,u.jsx)(`td`,{children:l(e.virtualMachines.totalCount)}),(0,u.jsx)(`td`,{className:`small`,children:c(e.labels)||`—`})]},e.id))})]}),(0,u.jsx)(s,{pageInfo:r?.clusters.pageInfo,total:r?.clusters.totalCount,pager:n})]})}export{f as default};