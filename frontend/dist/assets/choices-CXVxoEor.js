import{a as e,i as t,l as n}from"./Problem-CgqOsbFA.js";import{t as r}from"./index-CRFFy0-9.js";import{r as i}from"./format-eix3v1Vw.js";var a=t();function o({label:e,value:t,onChange:n,options:r,empty:i,required:o,describe:s,disabled:c}){return(0,a.jsxs)(`label`,{children:[e,(0,a.jsxs)(`select`,{value:t,onChange:e=>n(e.target.value),required:o,children:[(0,a.jsx)(`option`,{value:``,children:i}),r.map(e=>(0,a.jsx)(`option`,{value:e.id,disabled:c?.(e),children:s?s(e):e.name},e.id))]})]})}function s({value:e,onChange:t,statuses:n,describe:r}){return(0,a.jsxs)(`label`,{children:[`Status`,(0,a.jsxs)(`select`,{value:e,onChange:e=>t(e.target.value),children:[(0,a.jsx)(`option`,{value:``,children:`any (not deleted)`}),n.map(e=>(0,a.jsx)(`option`,{value:e,children:r?r(e):e.toLowerCase()},e)),(0,a.jsx)(`option`,{value:`DELETED`,children:`deleted`})]})]})}var c=e(`
  query ComputeChoices {
    tenants(first: 200, orderBy: { field: NAME }) { edges { node { id name } } }
    regions(first: 100, orderBy: { field: NAME }) { edges { node { id name } } }
    flavors(first: 200, orderBy: { field: NAME }, where: { disabled: false }) { edges { node { id name vcpus memoryMB diskGB } } }
    images(first: 200, orderBy: { field: NAME }) { edges { node { id name status } } }
    availabilityZones(first: 200, orderBy: { field: NAME }) { edges { node { id name region { id } } } }
  }
`),l=e(`
  query ComputeClusterChoices {
    clusters(first: 200, orderBy: { field: NAME }) { edges { node { id name region { id } } } }
  }
`),u=e=>(e?.edges??[]).flatMap(e=>e?.node?[e.node]:[]);function d(){let[{data:e,error:t,fetching:i}]=n({query:c}),{infra:a,known:o}=r(),[s]=n({query:l,pause:!o||!a});return{error:t,fetching:i,tenants:u(e?.tenants),regions:u(e?.regions),flavors:u(e?.flavors),images:u(e?.images),zones:u(e?.availabilityZones),clusters:u(s.data?.clusters)}}function f(e){return`${e.name} — ${e.vcpus} vCPU, ${i(e.memoryMB,`MiB`)}, ${i(e.diskGB,`GiB`)}`}function p(e){return e.status===`ACTIVE`?e.name:`${e.name} (${e.status.toLowerCase()})`}var m=e=>e.status!==`ACTIVE`;export{o as a,d as i,p as n,s as o,m as r,f as t};