import{a as e,o as t,u as n}from"./Problem-_3LBNcXe.js";import{t as r}from"./index-B_Yz7f47.js";var i=e();function a({label:e,value:t,onChange:n,options:r,empty:a,required:o,describe:s,disabled:c}){return(0,i.jsxs)(`label`,{children:[e,(0,i.jsxs)(`select`,{value:t,onChange:e=>n(e.target.value),required:o,children:[(0,i.jsx)(`option`,{value:``,children:a}),r.map(e=>(0,i.jsx)(`option`,{value:e.id,disabled:c?.(e),children:s?s(e):e.name},e.id))]})]})}function o({value:e,onChange:t,statuses:n}){return(0,i.jsxs)(`label`,{children:[`Status`,(0,i.jsxs)(`select`,{value:e,onChange:e=>t(e.target.value),children:[(0,i.jsx)(`option`,{value:``,children:`any (not deleted)`}),n.map(e=>(0,i.jsx)(`option`,{value:e,children:e.toLowerCase()},e)),(0,i.jsx)(`option`,{value:`DELETED`,children:`deleted`})]})]})}var s=t(`
  query ComputeChoices {
    tenants(first: 200, orderBy: { field: NAME }) { edges { node { id name } } }
    regions(first: 100, orderBy: { field: NAME }) { edges { node { id name } } }
    flavors(first: 200, orderBy: { field: NAME }, where: { disabled: false }) { edges { node { id name vcpus memoryMB diskGB } } }
    images(first: 200, orderBy: { field: NAME }) { edges { node { id name status } } }
  }
`),c=t(`
  query ComputeClusterChoices {
    clusters(first: 200, orderBy: { field: NAME }) { edges { node { id name region { id } } } }
  }
`),l=e=>(e?.edges??[]).flatMap(e=>e?.node?[e.node]:[]);function u(){let[{data:e,error:t,fetching:i}]=n({query:s}),{infra:a,known:o}=r(),[u]=n({query:c,pause:!o||!a});return{error:t,fetching:i,tenants:l(e?.tenants),regions:l(e?.regions),flavors:l(e?.flavors),images:l(e?.images),clusters:l(u.data?.clusters)}}function d(e){return`${e.name} — ${e.vcpus} vCPU, ${Math.round(e.memoryMB/1024)} GiB, ${e.diskGB} GB`}function f(e){return e.status===`ACTIVE`?e.name:`${e.name} (${e.status.toLowerCase()})`}var p=e=>e.status!==`ACTIVE`;export{a,u as i,f as n,o,p as r,d as t};