import{n as e}from"./index-CX8f7bI1.js";import{a as t,i as n,l as r,n as i,r as a}from"./Problem-BnMghjZI.js";import{n as o,t as s}from"./Pager-QpLwunGV.js";import{i as c}from"./policy-D_umdDaG.js";var l=n(),u=t(`
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
`);function d(){let t=o(25),[{data:n,error:d,fetching:f}]=r({query:u,variables:t.vars}),p=(n?.clusters.edges??[]).flatMap(e=>e?.node?[e.node]:[]);return(0,l.jsxs)(`div`,{children:[(0,l.jsx)(`h1`,{children:`Clusters`}),(0,l.jsx)(i,{error:d}),!n&&f&&(0,l.jsx)(a,{what:`Loading clusters`}),n&&p.length===0&&(0,l.jsx)(`p`,{className:`muted`,children:`No clusters yet.`}),p.length>0&&(0,l.jsxs)(`table`,{"aria-label":`Clusters`,children:[(0,l.jsx)(`thead`,{children:(0,l.jsxs)(`tr`,{children:[(0,l.jsx)(`th`,{children:`Cluster`}),(0,l.jsx)(`th`,{children:`Region`}),(0,l.jsx)(`th`,{children:`Datacenter`}),(0,l.jsx)(`th`,{children:`Nodes`}),(0,l.jsx)(`th`,{children:`VMs`}),(0,l.jsx)(`th`,{children:`Labels`})]})}),(0,l.jsx)(`tbody`,{children:p.map(t=>(0,l.jsxs)(`tr`,{children:[(0,l.jsx)(`td`,{children:(0,l.jsx)(e,{to:`/clusters/${t.id}`,children:t.name})}),(0,l.jsx)(`td`,{children:t.region.name}),(0,l.jsx)(`td`,{children:(0,l.jsx)(e,{to:`/datacenters/${t.datacenter.id}`,children:t.datacenter.name})}),(0,l.jsx)(`td`,{children:t.nodes.totalCount}),(0,l.jsx)(`td`,{children:t.virtualMachines.totalCount}),(0,l.jsx)(`td`,{className:`small`,children:c(t.labels)||`—`})]},t.id))})]}),(0,l.jsx)(s,{pageInfo:n?.clusters.pageInfo,total:n?.clusters.totalCount,pager:t})]})}export{d as default};