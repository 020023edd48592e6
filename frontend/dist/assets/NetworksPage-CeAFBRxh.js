import{o as e}from"./rolldown-runtime-BCiCTKAo.js";import{V as t,a as n,c as r,i,l as a,n as o}from"./Problem-CuvfRXt-.js";import{i as s,n as c,r as l}from"./index-C7CeH63O.js";import{t as u}from"./UsageBar-eNUXqMKQ.js";import{n as d}from"./format-eix3v1Vw.js";/* empty css             */var f=e(t(),1),p=i(),m=n(`
  query IPAMNetworks {
    networks(first: 200, orderBy: { field: NAME }) {
      totalCount
      edges {
        node {
          id
          name
          cidr
          vlan
          gateway
          purpose
          datacenter { id name }
          tenant { id name }
          utilization { usable allocated reserved free percentUsed }
        }
      }
    }
  }
`),h=n(`
  mutation CreateNetwork($input: CreateNetworkInput!) {
    createNetwork(input: $input) { id }
  }
`),g=[`MANAGEMENT`,`SERVICE`,`VM`,`STORAGE`];function _(){let e=s(),[t,n]=r(h),[i,a]=(0,f.useState)(``),[c,l]=(0,f.useState)(``),[u,d]=(0,f.useState)(``),[m,_]=(0,f.useState)(``),[v,y]=(0,f.useState)(`VM`);async function b(t){t.preventDefault();let r=m.trim()===``?void 0:Number(m),a=await n({input:{name:i.trim(),cidr:c.trim(),gateway:u.trim()||void 0,vlan:r,purpose:v}});a.data&&e(`/ipam/networks/${a.data.createNetwork.id}`)}return(0,p.jsxs)(`form`,{className:`card`,onSubmit:b,"aria-label":`New network`,children:[(0,p.jsx)(`h3`,{style:{marginTop:0},children:`New network`}),(0,p.jsxs)(`div`,{className:`fields`,children:[(0,p.jsxs)(`label`,{children:[`Name`,(0,p.jsx)(`input`,{value:i,required:!0,onChange:e=>a(e.target.value)})]}),(0,p.jsxs)(`label`,{children:[`Prefix (CIDR)`,(0,p.jsx)(`input`,{value:c,required:!0,placeholder:`10.20.0.0/24`,onChange:e=>l(e.target.value)})]}),(0,p.jsxs)(`label`,{children:[`Gateway`,(0,p.jsx)(`input`,{value:u,placeholder:`10.20.0.1`,onChange:e=>d(e.target.value)})]}),(0,p.jsxs)(`label`,{children:[`VLAN`,(0,p.jsx)(`input`,{type:`number`,min:1,max:4094,value:m,onChange:e=>_(e.target.value)})]}),(0,p.jsxs)(`label`,{children:[`Purpose`,(0,p.jsx)(`select`,{value:v,onChange:e=>y(e.target.value),children:g.map(e=>(0,p.jsx)(`option`,{value:e,children:e.toLowerCase()},e))})]})]}),(0,p.jsx)(o,{error:t.error}),(0,p.jsx)(`div`,{style:{marginTop:`.75rem`},children:(0,p.jsx)(`button`,{type:`submit`,className:`primary`,disabled:t.fetching,children:`Create network`})})]})}function v(){let[{data:e,error:t,fetching:n}]=a({query:m}),[r,i]=(0,f.useState)(!1),s=e?.networks.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,p.jsxs)(`div`,{children:[(0,p.jsxs)(`div`,{className:`row`,children:[(0,p.jsx)(`h1`,{children:`IP address management`}),(0,p.jsx)(`button`,{type:`button`,onClick:()=>i(!r),"aria-expanded":r,children:`New network`})]}),r&&(0,p.jsx)(_,{}),(0,p.jsx)(o,{error:t}),n&&!e&&(0,p.jsx)(c,{}),e&&s.length===0&&(0,p.jsx)(`p`,{className:`muted`,children:`No networks are visible to you.`}),s.length>0&&(0,p.jsxs)(`table`,{"aria-label":`Networks`,children:[(0,p.jsx)(`thead`,{children:(0,p.jsxs)(`tr`,{children:[(0,p.jsx)(`th`,{children:`Network`}),(0,p.jsx)(`th`,{children:`Prefix`}),(0,p.jsx)(`th`,{children:`VLAN`}),(0,p.jsx)(`th`,{children:`Purpose`}),(0,p.jsx)(`th`,{children:`Where`}),(0,p.jsx)(`th`,{children:`Used`}),(0,p.jsx)(`th`,{children:`Free`})]})}),(0,p.jsx)(`tbody`,{children:s.map(e=>(0,p.jsxs)(`tr`,{"data-testid":`network`,"data-name":e.name,children:[(0,p.jsx)(`td`,{children:(0,p.jsx)(l,{to:`/ipam/networks/${e.id}`,children:e.name})}),(0,p.jsx)(`td`,{children:(0,p.jsx)(`code`,{children:e.cidr})}),(0,p.jsx)(`td`,{children:e.vlan??`—`}),(0,p.jsx)(`td`,{children:e.purpose.toLowerCase()}),(0,p.jsx)(`td`,{className:`small`,children:[e.datacenter?.name,e.tenant?`tenant ${e.tenant.name}`:null].filter(Boolean).join(` · `)||`—`}),(0,p.jsx)(`td`,{style:{minWidth:180},children:(0,p.jsx)(u,{used:e.utilization.allocated+e.utilization.reserved,total:e.utilization.usable})}),(0,p.jsx)(`td`,{children:d(e.utilization.free)})]},e.id))})]})]})}export{v as default};