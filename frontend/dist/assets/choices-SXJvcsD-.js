import{o as e,u as t}from"./Problem-BZUdsvkn.js";import{t as n}from"./access-qgMqNFds.js";var r=e(`
  query ComputeChoices {
    tenants(first: 200, orderBy: { field: NAME }) { edges { node { id name } } }
    regions(first: 100, orderBy: { field: NAME }) { edges { node { id name } } }
    flavors(first: 200, orderBy: { field: NAME }, where: { disabled: false }) { edges { node { id name vcpus memoryMB diskGB } } }
    images(first: 200, orderBy: { field: NAME }) { edges { node { id name status } } }
  }
`),i=e(`
  query ComputeClusterChoices {
    clusters(first: 200, orderBy: { field: NAME }) { edges { node { id name region { id } } } }
  }
`),a=e=>(e?.edges??[]).flatMap(e=>e?.node?[e.node]:[]);function o(){let[{data:e,error:o,fetching:s}]=t({query:r}),{infra:c,known:l}=n(),[u]=t({query:i,pause:!l||!c});return{error:o,fetching:s,tenants:a(e?.tenants),regions:a(e?.regions),flavors:a(e?.flavors),images:a(e?.images),clusters:a(u.data?.clusters)}}export{o as t};