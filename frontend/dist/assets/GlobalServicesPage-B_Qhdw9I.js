import{n as e,r as t}from"./index-C7CeH63O.js";import{a as n,i as r,l as i,n as a}from"./Problem-CuvfRXt-.js";import{t as o}from"./StatusBadge-DhLBs1VX.js";/* empty css                */var s=r(),c=n(`
  query GlobalServices($first: Int) {
    globalServices(first: $first, orderBy: { field: NAME }) {
      totalCount
      edges {
        node {
          id name mode fqdn ttl status statusReason dnsAnswer
          tenant { id name }
          regionServices { totalCount }
        }
      }
    }
  }
`);function l(){let[{data:n,error:r,fetching:l},u]=i({query:c,variables:{first:500}}),d=(n?.globalServices.edges??[]).flatMap(e=>e?.node?[e.node]:[]);return(0,s.jsxs)(`div`,{children:[(0,s.jsxs)(`div`,{className:`spread`,children:[(0,s.jsx)(`h1`,{children:`Global services`}),(0,s.jsx)(`button`,{type:`button`,onClick:()=>u({requestPolicy:`network-only`}),children:`Refresh`})]}),(0,s.jsx)(`p`,{className:`muted`,children:`A global service joins region services of several regions: GSLB answers its DNS name with the healthy regions' VIPs, anycast announces one VIP from every region.`}),(0,s.jsx)(a,{error:r}),!n&&l&&(0,s.jsx)(e,{what:`Loading global services`}),n&&d.length===0&&(0,s.jsx)(`p`,{className:`muted`,children:`No global service yet.`}),d.length>0&&(0,s.jsxs)(`table`,{"aria-label":`Global services`,children:[(0,s.jsx)(`thead`,{children:(0,s.jsxs)(`tr`,{children:[(0,s.jsx)(`th`,{children:`Name`}),(0,s.jsx)(`th`,{children:`Status`}),(0,s.jsx)(`th`,{children:`Mode`}),(0,s.jsx)(`th`,{children:`FQDN`}),(0,s.jsx)(`th`,{children:`TTL`}),(0,s.jsx)(`th`,{children:`DNS answer`}),(0,s.jsx)(`th`,{children:`Region services`}),(0,s.jsx)(`th`,{children:`Tenant`})]})}),(0,s.jsx)(`tbody`,{children:d.map(e=>(0,s.jsxs)(`tr`,{"data-global-service-id":e.id,children:[(0,s.jsx)(`td`,{children:(0,s.jsx)(t,{to:`/global-services/${e.id}`,children:e.name})}),(0,s.jsxs)(`td`,{children:[(0,s.jsx)(o,{status:e.status,title:e.statusReason}),(0,s.jsx)(`div`,{className:`small muted`,children:e.statusReason})]}),(0,s.jsx)(`td`,{children:e.mode}),(0,s.jsx)(`td`,{className:`mono`,children:e.fqdn??`—`}),(0,s.jsxs)(`td`,{children:[e.ttl,` s`]}),(0,s.jsx)(`td`,{className:`mono`,children:(e.dnsAnswer??[]).join(`, `)||`empty`}),(0,s.jsx)(`td`,{children:e.regionServices.totalCount}),(0,s.jsx)(`td`,{children:(0,s.jsx)(t,{to:`/tenants/${e.tenant.id}`,children:e.tenant.name})})]},e.id))})]})]})}export{l as default};