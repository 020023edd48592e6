import{o as e}from"./rolldown-runtime-BCiCTKAo.js";import{V as t,a as n,i as r,l as i,n as a,r as o}from"./Problem-BnMghjZI.js";import{n as s}from"./index-CX8f7bI1.js";import{n as c,t as l}from"./Pager-QpLwunGV.js";import{t as u}from"./StatusBadge-Dks2VEsK.js";/* empty css            */var d=e(t(),1),f=r(),p=n(`
  query TenantsList($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: TenantWhereInput) {
    tenants(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: { field: NAME }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          id name displayName status
          members(first: 8) { totalCount edges { node { id username displayName } } }
          virtualMachines { totalCount }
          regionServices { totalCount }
          quotas { totalCount }
        }
      }
    }
  }
`);function m(){let e=c(25),[t,n]=(0,d.useState)(``),[{data:r,error:m,fetching:h}]=i({query:p,variables:{...e.vars,where:t?{nameContains:t}:{}}}),g=r?.tenants.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,f.jsxs)(`div`,{children:[(0,f.jsx)(`h1`,{children:`Tenants & quotas`}),(0,f.jsx)(`div`,{className:`filters`,role:`search`,children:(0,f.jsxs)(`label`,{children:[`Name contains`,(0,f.jsx)(`input`,{type:`search`,onKeyDown:t=>{t.key===`Enter`&&(n(t.currentTarget.value),e.reset())},onBlur:t=>{n(t.currentTarget.value),e.reset()}})]})}),(0,f.jsx)(a,{error:m}),!r&&h&&(0,f.jsx)(o,{}),r&&g.length===0&&(0,f.jsxs)(`p`,{className:`muted`,children:[`No tenants`,t?` match this name`:` yet`,`.`]}),g.length>0&&(0,f.jsxs)(`table`,{className:`ops-table`,"aria-label":`Tenants`,children:[(0,f.jsx)(`thead`,{children:(0,f.jsxs)(`tr`,{children:[(0,f.jsx)(`th`,{children:`Tenant`}),(0,f.jsx)(`th`,{children:`Status`}),(0,f.jsx)(`th`,{children:`Members`}),(0,f.jsx)(`th`,{className:`num`,children:`VMs`}),(0,f.jsx)(`th`,{className:`num`,children:`Services`}),(0,f.jsx)(`th`,{className:`num`,children:`Quotas`})]})}),(0,f.jsx)(`tbody`,{children:g.map(e=>{let t=e.members.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,f.jsxs)(`tr`,{children:[(0,f.jsxs)(`td`,{children:[(0,f.jsx)(s,{to:`/tenants/${e.id}`,children:e.displayName||e.name}),e.displayName&&(0,f.jsxs)(`span`,{className:`muted small`,children:[` (`,e.name,`)`]})]}),(0,f.jsx)(`td`,{children:(0,f.jsx)(u,{status:e.status})}),(0,f.jsxs)(`td`,{children:[t.length===0?(0,f.jsx)(`span`,{className:`muted`,children:`none`}):t.map(e=>e.username).join(`, `),e.members.totalCount>t.length&&(0,f.jsxs)(`span`,{className:`muted`,children:[` and `,e.members.totalCount-t.length,` more`]})]}),(0,f.jsx)(`td`,{className:`num`,children:(0,f.jsx)(s,{to:`/vms?tenant=${e.id}`,children:e.virtualMachines.totalCount})}),(0,f.jsx)(`td`,{className:`num`,children:(0,f.jsx)(s,{to:`/services?tenant=${e.id}`,children:e.regionServices.totalCount})}),(0,f.jsx)(`td`,{className:`num`,children:e.quotas.totalCount})]},e.id)})})]}),(0,f.jsx)(l,{pageInfo:r?.tenants.pageInfo,total:r?.tenants.totalCount,pager:e})]})}export{m as default};