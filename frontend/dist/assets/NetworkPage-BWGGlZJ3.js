import{o as e}from"./rolldown-runtime-BCiCTKAo.js";import{V as t,a as n,c as r,i,l as a,n as o}from"./Problem-CuvfRXt-.js";import{a as s,n as c,r as l}from"./index-C7CeH63O.js";import{t as u}from"./UsageBar-eNUXqMKQ.js";import{t as d}from"./StatusBadge-DhLBs1VX.js";import{t as f}from"./HistoryLink-GMxRxGTH.js";import{l as p}from"./forms-Dl_7drNq.js";import{n as m}from"./format-eix3v1Vw.js";/* empty css             */var h=e(t(),1),g=i(),_=n(`
  query IPAMNetwork($id: ID!) {
    node(id: $id) {
      ... on Network {
        id
        name
        description
        cidr
        vlan
        gateway
        purpose
        datacenter { id name }
        tenant { id name }
        utilization { size usable allocated reserved free percentUsed }
        freeRanges(first: 20) { start end size }
        ipRanges(first: 100) { edges { node { id startAddress endAddress description } } }
        ipAddresses(first: 500, orderBy: { field: ADDRESS }) {
          totalCount
          edges {
            node {
              id
              address
              status
              dnsName
              description
              port { id name host { id name } virtualMachine { id name status } }
              loadBalancer { id name }
            }
          }
        }
      }
    }
  }
`),v=n(`
  mutation AllocateIPAddress($input: AllocateIPAddressInput!) {
    allocateIPAddress(input: $input) { id address status }
  }
`),y=n(`
  mutation ReleaseIPAddress($id: ID!) {
    releaseIPAddress(id: $id)
  }
`),b=n(`
  mutation BindIPAddress($id: ID!, $input: UpdateIPAddressInput!) {
    updateIPAddress(id: $id, input: $input) { id port { id } }
  }
`),x=n(`
  mutation CreateIPRange($input: CreateIPRangeInput!) {
    createIPRange(input: $input) { id }
  }
`),S=n(`
  mutation DeleteIPRange($id: ID!) {
    deleteIPRange(id: $id)
  }
`),C=n(`
  query IPAMLoadBalancers {
    loadBalancers(first: 200) { edges { node { id name tenant { name } vip { id address } } } }
  }
`);function w({networkID:e,onDone:t}){let[n,i]=r(v),[s]=a({query:C}),[c,l]=(0,h.useState)(``),[u,d]=(0,h.useState)(`ALLOCATED`),[f,m]=(0,h.useState)(``),[_,y]=(0,h.useState)(``),[b,x]=(0,h.useState)(``);async function S(n){n.preventDefault();let r=await i({input:{networkID:e,address:c.trim()||void 0,status:u,dnsName:f.trim()||void 0,portID:_||void 0,loadBalancerID:b||void 0}});r.data&&(l(``),t(r.data.allocateIPAddress.address))}return(0,g.jsxs)(`form`,{className:`card`,onSubmit:S,"aria-label":`Allocate an address`,children:[(0,g.jsx)(`h3`,{style:{marginTop:0},children:`Allocate an address`}),(0,g.jsxs)(`div`,{className:`fields`,children:[(0,g.jsxs)(`label`,{children:[`Address`,(0,g.jsx)(`input`,{value:c,placeholder:`next free`,onChange:e=>l(e.target.value)})]}),(0,g.jsxs)(`label`,{children:[`Status`,(0,g.jsxs)(`select`,{value:u,onChange:e=>d(e.target.value),children:[(0,g.jsx)(`option`,{value:`ALLOCATED`,children:`allocated`}),(0,g.jsx)(`option`,{value:`RESERVED`,children:`reserved`})]})]}),(0,g.jsxs)(`label`,{children:[`DNS name`,(0,g.jsx)(`input`,{value:f,onChange:e=>m(e.target.value)})]}),(0,g.jsx)(p,{value:_,onPick:y}),(0,g.jsxs)(`label`,{children:[`VIP of load balancer`,(0,g.jsxs)(`select`,{value:b,onChange:e=>x(e.target.value),children:[(0,g.jsx)(`option`,{value:``,children:`none`}),s.data?.loadBalancers.edges?.map(e=>e?.node&&(0,g.jsxs)(`option`,{value:e.node.id,children:[e.node.name,` (`,e.node.tenant.name,`)`,e.node.vip?` · VIP ${e.node.vip.address}`:``]},e.node.id))]})]})]}),(0,g.jsx)(o,{error:n.error}),(0,g.jsx)(`div`,{style:{marginTop:`.75rem`},children:(0,g.jsx)(`button`,{type:`submit`,className:`primary`,disabled:n.fetching,children:`Allocate`})})]})}function T({networkID:e,onDone:t}){let[n,i]=r(x),[a,s]=(0,h.useState)(``),[c,l]=(0,h.useState)(``),[u,d]=(0,h.useState)(``);async function f(n){n.preventDefault(),(await i({input:{networkID:e,startAddress:a.trim(),endAddress:c.trim(),description:u.trim()||void 0}})).data&&(s(``),l(``),t())}return(0,g.jsxs)(`form`,{onSubmit:f,"aria-label":`Reserve a range`,children:[(0,g.jsxs)(`div`,{className:`fields`,children:[(0,g.jsxs)(`label`,{children:[`First address`,(0,g.jsx)(`input`,{value:a,required:!0,onChange:e=>s(e.target.value)})]}),(0,g.jsxs)(`label`,{children:[`Last address`,(0,g.jsx)(`input`,{value:c,required:!0,onChange:e=>l(e.target.value)})]}),(0,g.jsxs)(`label`,{children:[`Why`,(0,g.jsx)(`input`,{value:u,onChange:e=>d(e.target.value)})]})]}),(0,g.jsx)(o,{error:n.error}),(0,g.jsx)(`button`,{type:`submit`,disabled:n.fetching,style:{marginTop:`.5rem`},children:`Reserve range`})]})}function E({id:e,onDone:t}){let[n,i]=(0,h.useState)(!1),[a,s]=(0,h.useState)(``),[c,l]=r(b);return n?(0,g.jsxs)(`form`,{"aria-label":`Bind to a port`,className:`fields`,onSubmit:async n=>{n.preventDefault(),(await l({id:e,input:a?{portID:a}:{clearPort:!0}})).data&&(i(!1),t())},children:[(0,g.jsx)(p,{value:a,onPick:s}),(0,g.jsx)(o,{error:c.error}),(0,g.jsxs)(`div`,{className:`row`,children:[(0,g.jsx)(`button`,{type:`submit`,className:`primary`,disabled:c.fetching,children:a?`Bind`:`Unbind`}),(0,g.jsx)(`button`,{type:`button`,onClick:()=>i(!1),children:`Cancel`})]})]}):(0,g.jsx)(`button`,{type:`button`,className:`link`,onClick:()=>i(!0),children:`Bind`})}function D(e){let t=e.port?.virtualMachine;return!!t&&t.status!==`DELETED`}function O(){let{id:e=``}=s(),[{data:t,error:n,fetching:i},p]=a({query:_,variables:{id:e}}),[v,b]=r(y),[x,C]=r(S),[O,k]=(0,h.useState)(``),A=()=>p({requestPolicy:`network-only`}),j=t?.node&&`cidr`in t.node?t.node:null;if(!j)return(0,g.jsxs)(`div`,{children:[(0,g.jsx)(`nav`,{className:`breadcrumbs`,"aria-label":`Breadcrumbs`,children:(0,g.jsx)(l,{to:`/ipam/networks`,children:`Networks`})}),(0,g.jsx)(`h1`,{children:`Network`}),(0,g.jsx)(o,{error:n}),i&&(0,g.jsx)(c,{}),t&&!n&&(0,g.jsx)(`p`,{className:`muted`,children:`There is no network with this id, or you may not see it.`})]});let M=j.utilization,N=j.ipAddresses.edges?.flatMap(e=>e?.node?[e.node]:[])??[],P=j.ipRanges.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,g.jsxs)(`div`,{children:[(0,g.jsxs)(`nav`,{className:`breadcrumbs`,"aria-label":`Breadcrumbs`,children:[(0,g.jsx)(l,{to:`/ipam/networks`,children:`Networks`}),(0,g.jsx)(`span`,{children:j.name})]}),(0,g.jsxs)(`div`,{className:`row`,children:[(0,g.jsx)(`h1`,{children:j.name}),(0,g.jsx)(`code`,{children:j.cidr}),(0,g.jsxs)(`span`,{className:`muted`,children:[j.purpose.toLowerCase(),j.vlan?` · VLAN ${j.vlan}`:``,j.gateway?` · gateway ${j.gateway}`:``]}),(0,g.jsx)(f,{type:`Network`,id:j.id}),(0,g.jsx)(l,{to:`/network?from=${encodeURIComponent(j.id)}`,children:`Network map`})]}),(0,g.jsx)(o,{error:n}),O&&(0,g.jsx)(`div`,{className:`message message-ok`,role:`status`,children:O}),(0,g.jsxs)(`div`,{className:`ipam-grid`,children:[(0,g.jsxs)(`div`,{className:`card`,"data-testid":`utilization`,children:[(0,g.jsx)(`h2`,{style:{marginTop:0},children:`Utilization`}),(0,g.jsx)(u,{label:`Used`,used:M.allocated+M.reserved,total:M.usable}),(0,g.jsxs)(`dl`,{className:`host-facts`,children:[(0,g.jsx)(`dt`,{children:`Usable`}),(0,g.jsx)(`dd`,{children:m(M.usable)}),(0,g.jsx)(`dt`,{children:`Allocated`}),(0,g.jsx)(`dd`,{"data-testid":`allocated`,children:m(M.allocated)}),(0,g.jsx)(`dt`,{children:`Reserved`}),(0,g.jsx)(`dd`,{children:m(M.reserved)}),(0,g.jsx)(`dt`,{children:`Free`}),(0,g.jsx)(`dd`,{"data-testid":`free`,children:m(M.free)})]})]}),(0,g.jsxs)(`div`,{className:`card`,children:[(0,g.jsx)(`h2`,{style:{marginTop:0},children:`Free ranges`}),j.freeRanges.length===0?(0,g.jsx)(`p`,{className:`muted`,children:`The network is full.`}):(0,g.jsx)(`ul`,{className:`small`,"aria-label":`Free ranges`,children:j.freeRanges.map(e=>(0,g.jsxs)(`li`,{children:[(0,g.jsx)(`code`,{children:e.start}),e.end!==e.start&&(0,g.jsxs)(g.Fragment,{children:[` `,`– `,(0,g.jsx)(`code`,{children:e.end})]}),` `,(0,g.jsxs)(`span`,{className:`muted`,children:[`(`,m(e.size),`)`]})]},e.start))})]}),(0,g.jsxs)(`div`,{className:`card`,children:[(0,g.jsx)(`h2`,{style:{marginTop:0},children:`Reserved ranges`}),P.length===0?(0,g.jsx)(`p`,{className:`muted small`,children:`No reserved range.`}):(0,g.jsx)(`ul`,{className:`small`,"aria-label":`Reserved ranges`,children:P.map(e=>(0,g.jsxs)(`li`,{children:[(0,g.jsx)(`code`,{children:e.startAddress}),` – `,(0,g.jsx)(`code`,{children:e.endAddress}),` `,e.description&&(0,g.jsx)(`span`,{className:`muted`,children:e.description}),` `,(0,g.jsx)(`button`,{type:`button`,className:`link`,disabled:x.fetching,onClick:async()=>{(await C({id:e.id})).error||A()},children:`Remove`})]},e.id))}),(0,g.jsx)(o,{error:x.error}),(0,g.jsx)(T,{networkID:j.id,onDone:A})]})]}),(0,g.jsx)(`div`,{style:{marginTop:`1rem`},children:(0,g.jsx)(w,{networkID:j.id,onDone:e=>{k(`Allocated ${e}.`),A()}})}),(0,g.jsxs)(`h2`,{children:[`Addresses (`,m(j.ipAddresses.totalCount),`)`]}),(0,g.jsx)(o,{error:v.error}),N.length===0?(0,g.jsx)(`p`,{className:`muted`,children:`No address of this network is allocated or reserved.`}):(0,g.jsxs)(`table`,{"aria-label":`Addresses`,children:[(0,g.jsx)(`thead`,{children:(0,g.jsxs)(`tr`,{children:[(0,g.jsx)(`th`,{children:`Address`}),(0,g.jsx)(`th`,{children:`Status`}),(0,g.jsx)(`th`,{children:`DNS name`}),(0,g.jsx)(`th`,{children:`Bound to`}),(0,g.jsx)(`th`,{})]})}),(0,g.jsx)(`tbody`,{children:N.map(e=>(0,g.jsxs)(`tr`,{"data-testid":`address`,"data-address":e.address,children:[(0,g.jsx)(`td`,{children:(0,g.jsx)(`code`,{children:e.address})}),(0,g.jsx)(`td`,{children:(0,g.jsx)(d,{status:e.status})}),(0,g.jsx)(`td`,{children:e.dnsName??`—`}),(0,g.jsxs)(`td`,{className:`small`,children:[e.port?.host&&(0,g.jsxs)(g.Fragment,{children:[(0,g.jsx)(l,{to:`/hosts/${e.port.host.id}`,children:e.port.host.name}),` `,e.port.name]}),e.port?.virtualMachine&&(0,g.jsxs)(g.Fragment,{children:[(0,g.jsx)(l,{to:`/vms/${e.port.virtualMachine.id}`,children:e.port.virtualMachine.name}),` `,e.port.name]}),e.loadBalancer&&(0,g.jsxs)(`span`,{children:[`VIP of `,e.loadBalancer.name]}),!e.port&&!e.loadBalancer&&(0,g.jsx)(`span`,{className:`muted`,children:`—`})]}),(0,g.jsx)(`td`,{children:(0,g.jsxs)(`div`,{className:`row`,children:[(0,g.jsx)(E,{id:e.id,onDone:A}),(0,g.jsx)(f,{type:`IPAddress`,id:e.id}),D(e)?(0,g.jsx)(`span`,{className:`muted small`,"data-testid":`in-use`,title:`Released when its VM is deleted`,children:`in use by its VM`}):(0,g.jsx)(`button`,{type:`button`,className:`link`,"aria-label":`Release ${e.address}`,disabled:v.fetching,onClick:async()=>{(await b({id:e.id})).error||(k(`Released ${e.address}.`),A())},children:`Release`})]})})]},e.id))})]})]})}export{O as default};