import{n as e,r as t}from"./index-C7CeH63O.js";import{a as n,i as r,l as i,n as a}from"./Problem-CuvfRXt-.js";import{t as o}from"./StatusBadge-DhLBs1VX.js";import{t as s}from"./listeners-CHEeXL2u.js";/* empty css                */var c=r(),l=n(`
  query LoadBalancers($first: Int) {
    loadBalancers(first: $first, orderBy: { field: NAME }) {
      totalCount
      edges {
        node {
          id name status statusReason healthCheckIntervalMs
          vip { id address }
          listeners { port protocol targetPort }
          members { vmID health }
          nodeStates { nodeID announced forwarding }
          tenant { id name }
          regionService { id name }
        }
      }
    }
  }
`);function u(){let[{data:n,error:r,fetching:u},d]=i({query:l,variables:{first:500}}),f=(n?.loadBalancers.edges??[]).flatMap(e=>e?.node?[e.node]:[]);return(0,c.jsxs)(`div`,{children:[(0,c.jsxs)(`div`,{className:`spread`,children:[(0,c.jsx)(`h1`,{children:`Load balancers`}),(0,c.jsx)(`button`,{type:`button`,onClick:()=>d({requestPolicy:`network-only`}),children:`Refresh`})]}),(0,c.jsx)(`p`,{className:`muted`,children:`A load balancer forwards its VIP's listeners to the replicas of its region service; it is active only while a serving node announces the VIP over BGP and forwards.`}),(0,c.jsx)(a,{error:r}),!n&&u&&(0,c.jsx)(e,{what:`Loading load balancers`}),n&&f.length===0&&(0,c.jsx)(`p`,{className:`muted`,children:`No load balancer yet: create a region service with a load balancer.`}),f.length>0&&(0,c.jsxs)(`table`,{"aria-label":`Load balancers`,children:[(0,c.jsx)(`thead`,{children:(0,c.jsxs)(`tr`,{children:[(0,c.jsx)(`th`,{children:`Name`}),(0,c.jsx)(`th`,{children:`Status`}),(0,c.jsx)(`th`,{children:`VIP`}),(0,c.jsx)(`th`,{children:`Listeners`}),(0,c.jsx)(`th`,{children:`Members up`}),(0,c.jsx)(`th`,{children:`Nodes announcing`}),(0,c.jsx)(`th`,{children:`Service`}),(0,c.jsx)(`th`,{children:`Tenant`})]})}),(0,c.jsx)(`tbody`,{children:f.map(e=>(0,c.jsxs)(`tr`,{"data-lb-id":e.id,children:[(0,c.jsx)(`td`,{children:(0,c.jsx)(t,{to:`/load-balancers/${e.id}`,children:e.name})}),(0,c.jsxs)(`td`,{children:[(0,c.jsx)(o,{status:e.status,title:e.statusReason}),(0,c.jsx)(`div`,{className:`small muted`,children:e.statusReason})]}),(0,c.jsx)(`td`,{className:`mono`,children:e.vip?.address??`—`}),(0,c.jsx)(`td`,{children:s(e.listeners)}),(0,c.jsxs)(`td`,{children:[(e.members??[]).filter(e=>e.health===`UP`).length,` / `,(e.members??[]).length]}),(0,c.jsxs)(`td`,{children:[(e.nodeStates??[]).filter(e=>e.announced).length,` / `,(e.nodeStates??[]).length]}),(0,c.jsx)(`td`,{children:e.regionService?(0,c.jsx)(t,{to:`/services/${e.regionService.id}`,children:e.regionService.name}):`—`}),(0,c.jsx)(`td`,{children:(0,c.jsx)(t,{to:`/tenants/${e.tenant.id}`,children:e.tenant.name})})]},e.id))})]})]})}export{u as default};