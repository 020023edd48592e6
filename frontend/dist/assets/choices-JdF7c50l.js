import{a as e,i as t,l as n}from"./Problem-CuvfRXt-.js";import{t as r}from"./index-C7CeH63O.js";import{r as i}from"./format-eix3v1Vw.js";var a=t();function o({label:e,value:t,onChange:n,options:r,empty:i,required:o,describe:s,disabled:c}){return(0,a.jsxs)(`label`,{children:[e,(0,a.jsxs)(`select`,{value:t,onChange:e=>n(e.target.value),required:o,children:[(0,a.jsx)(`option`,{value:``,children:i}),r.map(e=>(0,a.jsx)(`option`,{value:e.id,disabled:c?.(e),children:s?s(e):e.name},e.id))]})]})}function s({value:e,onChange:t,statuses:n,describe:r}){return(0,a.jsxs)(`label`,{children:[`Status`,(0,a.jsxs)(`select`,{value:e,onChange:e=>t(e.target.value),children:[(0,a.jsx)(`option`,{value:``,children:`any (not deleted)`}),n.map(e=>(0,a.jsx)(`option`,{value:e,children:r?r(e):e.toLowerCase()},e)),(0,a.jsx)(`option`,{value:`DELETED`,children:`deleted`})]})]})}function c(e){switch(e){case`HOST`:return`whole machine, alone`;case`NUMA_NODE`:return`one NUMA node, alone`;default:return``}}var l=e(`
  query ComputeChoices {
    tenants(first: 200, orderBy: { field: NAME }) { edges { node { id name } } }
    regions(first: 100, orderBy: { field: NAME }) { edges { node { id name } } }
    flavors(first: 200, orderBy: { field: NAME }, where: { disabled: false }) { edges { node { id name vcpus memoryMB diskGB exclusive } } }
    images(first: 200, orderBy: { field: NAME }) { edges { node { id name status } } }
    availabilityZones(first: 200, orderBy: { field: NAME }) { edges { node { id name region { id } } } }
  }
`),u=e(`
  query ComputeClusterChoices {
    clusters(first: 200, orderBy: { field: NAME }) { edges { node { id name region { id } } } }
  }
`),d=e=>(e?.edges??[]).flatMap(e=>e?.node?[e.node]:[]);function f(){let[{data:e,error:t,fetching:i}]=n({query:l}),{infra:a,known:o}=r(),[s]=n({query:u,pause:!o||!a});return{error:t,fetching:i,tenants:d(e?.tenants),regions:d(e?.regions),flavors:d(e?.flavors),images:d(e?.images),zones:d(e?.availabilityZones),clusters:d(s.data?.clusters)}}function p(e){let t=c(e.exclusive);return`${e.name} — ${e.vcpus} vCPU, ${i(e.memoryMB,`MiB`)}, ${i(e.diskGB,`GiB`)}${t?` — ${t}`:``}`}function m(e){return e.status===`ACTIVE`?e.name:`${e.name} (${e.status.toLowerCase()})`}var h=e=>e.status!==`ACTIVE`;export{f as a,d as i,m as n,o,h as r,s,p as t};