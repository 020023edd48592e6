import{o as e}from"./rolldown-runtime-BCiCTKAo.js";import{V as t,a as n,i as r,n as i}from"./Problem-CuvfRXt-.js";var a=e(t(),1),o=r();function s(e){for(let t of e?.graphQLErrors??[]){let e=t.extensions?.dependents;if(Array.isArray(e))return e.filter(e=>typeof e?.edge==`string`&&typeof e?.count==`number`)}return[]}function c({what:e,onDelete:t,onDone:n}){let[r,c]=(0,a.useState)(!1),[l,u]=(0,a.useState)(!1),[d,f]=(0,a.useState)(),p=s(d);async function m(){u(!0);let e=await t();u(!1),c(!1),e.error?f(e.error):n()}return(0,o.jsxs)(`div`,{className:`delete-control`,children:[r?(0,o.jsxs)(`span`,{role:`group`,"aria-label":`Confirm delete`,children:[`Delete `,e,`?`,` `,(0,o.jsx)(`button`,{type:`button`,className:`danger`,onClick:m,disabled:l,children:`Yes, delete`}),` `,(0,o.jsx)(`button`,{type:`button`,onClick:()=>c(!1),children:`Cancel`})]}):(0,o.jsx)(`button`,{type:`button`,className:`danger`,onClick:()=>{f(void 0),c(!0)},children:`Delete`}),p.length>0&&(0,o.jsxs)(`div`,{className:`message message-error`,role:`alert`,"data-testid":`dependents`,children:[`Cannot delete `,e,`: still referenced by`,(0,o.jsx)(`ul`,{children:p.map(e=>(0,o.jsxs)(`li`,{children:[e.count,` `,e.edge]},e.edge))}),`Remove or move them first.`]}),p.length===0&&(0,o.jsx)(i,{error:d})]})}var l=n(`
  mutation DeleteDatacenter($id: ID!) {
    deleteDatacenter(id: $id)
  }
`),u=n(`
  mutation DeleteFloor($id: ID!) {
    deleteFloor(id: $id)
  }
`),d=n(`
  mutation DeleteRack($id: ID!) {
    deleteRack(id: $id)
  }
`),f=n(`
  mutation DeleteHost($id: ID!) {
    deleteHost(id: $id)
  }
`);n(`
  mutation DeletePort($id: ID!) {
    deletePort(id: $id)
  }
`);var p=n(`
  mutation DeleteLink($id: ID!) {
    deleteLink(id: $id)
  }
`);export{d as a,p as i,u as n,c as o,f as r,l as t};