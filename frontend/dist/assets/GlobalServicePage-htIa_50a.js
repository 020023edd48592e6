import{o as e}from"./rolldown-runtime-BCiCTKAo.js";import{V as t,a as n,c as r,i,l as a,n as o}from"./Problem-CuvfRXt-.js";import{a as s,n as c,r as l}from"./index-C7CeH63O.js";import{t as u}from"./StatusBadge-DhLBs1VX.js";import{t as d}from"./format-eix3v1Vw.js";/* empty css                */var f=e(t(),1),p=i(),m=n(`
  query GlobalService($id: ID!) {
    node(id: $id) {
      ... on GlobalService {
        id name description mode fqdn ttl status statusReason dnsAnswer updatedAt
        tenant { id name }
        regionServices(first: 100) {
          edges {
            node {
              id name status
              region { id name }
              loadBalancer { id status statusReason vip { address } }
            }
          }
        }
      }
    }
  }
`),h=n(`
  query GlobalServiceCandidates($tenant: ID!) {
    regionServices(first: 200, where: { hasTenantWith: [{ id: $tenant }], statusNEQ: DELETED }, orderBy: { field: NAME }) {
      edges { node { id name region { name } globalService { id } } }
    }
  }
`),g=n(`
  mutation UpdateGlobalServiceMembers($id: ID!, $input: UpdateGlobalServiceInput!) {
    updateGlobalService(id: $id, input: $input) { id status statusReason updatedAt regionServices { totalCount } }
  }
`);function _(){let{id:e=``}=s(),[{data:t,error:n,fetching:i},_]=a({query:m,variables:{id:e}}),v=t?.node&&t.node.__typename===`GlobalService`?t.node:null,[y]=a({query:h,variables:{tenant:v?.tenant.id??``},pause:!v}),[b,x]=r(g),[S,C]=(0,f.useState)(``);if(n)return(0,p.jsx)(o,{error:n,title:`The global service could not be loaded`});if(!t&&i)return(0,p.jsx)(c,{what:`Loading the global service`});if(!v)return(0,p.jsxs)(`div`,{children:[(0,p.jsx)(`h1`,{children:`Global service not found`}),(0,p.jsxs)(`p`,{children:[`There is no global service `,e,` you may see. `,(0,p.jsx)(l,{to:`/global-services`,children:`All global services`})]})]});let w=(v.regionServices.edges??[]).flatMap(e=>e?.node?[e.node]:[]),T=(y.data?.regionServices.edges??[]).flatMap(e=>e?.node&&!e.node.globalService?[e.node]:[]),E=async e=>{(await x({id:v.id,input:e})).error||(C(``),_({requestPolicy:`network-only`}))};return(0,p.jsxs)(`div`,{children:[(0,p.jsxs)(`div`,{className:`breadcrumbs`,children:[(0,p.jsx)(l,{to:`/global-services`,children:`Global services`}),(0,p.jsx)(`span`,{children:v.name})]}),(0,p.jsxs)(`div`,{className:`spread`,children:[(0,p.jsxs)(`h1`,{children:[v.name,` `,(0,p.jsx)(u,{status:v.status,title:v.statusReason})]}),(0,p.jsx)(`button`,{type:`button`,onClick:()=>_({requestPolicy:`network-only`}),children:`Refresh`})]}),(0,p.jsx)(`p`,{className:`muted`,"data-testid":`gs-reason`,children:v.statusReason||`No status reason.`}),(0,p.jsx)(`section`,{className:`card`,children:(0,p.jsxs)(`dl`,{className:`dl`,children:[(0,p.jsx)(`dt`,{children:`Mode`}),(0,p.jsx)(`dd`,{"data-testid":`gs-mode`,children:v.mode}),(0,p.jsx)(`dt`,{children:`FQDN`}),(0,p.jsx)(`dd`,{className:`mono`,"data-testid":`gs-fqdn`,children:v.fqdn??`—`}),(0,p.jsx)(`dt`,{children:`TTL`}),(0,p.jsxs)(`dd`,{"data-testid":`gs-ttl`,children:[v.ttl,` s`]}),(0,p.jsx)(`dt`,{children:`DNS answer`}),(0,p.jsx)(`dd`,{className:`mono`,"data-testid":`gs-answer`,children:(v.dnsAnswer??[]).join(`, `)||`empty`}),(0,p.jsx)(`dt`,{children:`Tenant`}),(0,p.jsx)(`dd`,{children:(0,p.jsx)(l,{to:`/tenants/${v.tenant.id}`,children:v.tenant.name})}),(0,p.jsx)(`dt`,{children:`Updated`}),(0,p.jsx)(`dd`,{children:d(v.updatedAt)}),v.description&&(0,p.jsxs)(p.Fragment,{children:[(0,p.jsx)(`dt`,{children:`Description`}),(0,p.jsx)(`dd`,{children:v.description})]})]})}),(0,p.jsx)(`h2`,{children:`Region services`}),(0,p.jsx)(o,{error:b.error,title:`The members were not changed`}),w.length===0?(0,p.jsx)(`p`,{className:`muted`,children:`No region service is attached.`}):(0,p.jsxs)(`table`,{"aria-label":`Member region services`,children:[(0,p.jsx)(`thead`,{children:(0,p.jsxs)(`tr`,{children:[(0,p.jsx)(`th`,{children:`Service`}),(0,p.jsx)(`th`,{children:`Region`}),(0,p.jsx)(`th`,{children:`VIP`}),(0,p.jsx)(`th`,{children:`Load balancer`}),(0,p.jsx)(`th`,{})]})}),(0,p.jsx)(`tbody`,{children:w.map(e=>(0,p.jsxs)(`tr`,{"data-member-service":e.name,children:[(0,p.jsx)(`td`,{children:(0,p.jsx)(l,{to:`/services/${e.id}`,children:e.name})}),(0,p.jsx)(`td`,{children:e.region.name}),(0,p.jsx)(`td`,{className:`mono`,children:e.loadBalancer?.vip?.address??`—`}),(0,p.jsx)(`td`,{children:e.loadBalancer?(0,p.jsx)(l,{to:`/load-balancers/${e.loadBalancer.id}`,children:(0,p.jsx)(u,{status:e.loadBalancer.status,title:e.loadBalancer.statusReason})}):`none`}),(0,p.jsx)(`td`,{children:(0,p.jsx)(`button`,{type:`button`,className:`danger`,disabled:b.fetching,onClick:()=>E({removeRegionServiceIDs:[e.id]}),children:`Detach`})})]},e.id))})]}),(0,p.jsxs)(`form`,{className:`row`,"aria-label":`Attach a region service`,onSubmit:e=>{e.preventDefault(),S&&E({addRegionServiceIDs:[S]})},children:[(0,p.jsxs)(`label`,{children:[`Region service`,(0,p.jsxs)(`select`,{value:S,onChange:e=>C(e.target.value),children:[(0,p.jsx)(`option`,{value:``,children:`choose…`}),T.map(e=>(0,p.jsxs)(`option`,{value:e.id,children:[e.name,` (`,e.region.name,`)`]},e.id))]})]}),(0,p.jsx)(`button`,{type:`submit`,disabled:!S||b.fetching,children:`Attach`})]})]})}export{_ as default};