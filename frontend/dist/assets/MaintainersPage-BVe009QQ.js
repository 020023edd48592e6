import{a as e,i as t,l as n,n as r,r as i}from"./Problem-BnMghjZI.js";import{t as a}from"./StatusBadge-Dks2VEsK.js";import{n as o}from"./index-CX8f7bI1.js";/* empty css            */var s=t(),c=[{key:`racks`,label:`Racks`,path:`/racks/`},{key:`hosts`,label:`Hosts`,path:`/hosts/`},{key:`nodes`,label:`Nodes`,path:`/nodes/`},{key:`clusters`,label:`Clusters`,path:`/clusters/`},{key:`virtualMachines`,label:`VMs`,path:`/vms/`},{key:`kubernetesClusters`,label:`Kubernetes clusters`,path:null}];function l({of:e}){let t=c.filter(t=>e[t.key].totalCount>0);return t.length===0?(0,s.jsx)(`span`,{className:`muted small`,children:`nothing directly`}):(0,s.jsx)(`ul`,{className:`resp`,children:t.map(t=>{let n=e[t.key],r=n.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,s.jsxs)(`li`,{children:[(0,s.jsxs)(`strong`,{children:[t.label,` (`,n.totalCount,`):`]}),` `,r.map((e,n)=>(0,s.jsxs)(`span`,{children:[n>0&&`, `,t.path?(0,s.jsx)(o,{to:t.path+e.id,children:e.name}):e.name]},e.id)),n.totalCount>r.length&&(0,s.jsxs)(`span`,{className:`muted`,children:[` and `,n.totalCount-r.length,` more`]})]},t.key)})})}var u=e(`
  query MaintainersPage {
    maintainerGroups(first: 100, orderBy: { field: NAME }) {
      totalCount
      edges {
        node {
          id name description status
          admin { id name }
          members(first: 50) { totalCount edges { node { id name } } }
          racks(first: 5) { totalCount edges { node { id name } } }
          hosts(first: 5) { totalCount edges { node { id name } } }
          nodes(first: 5) { totalCount edges { node { id name } } }
          clusters(first: 5) { totalCount edges { node { id name } } }
          virtualMachines(first: 5) { totalCount edges { node { id name } } }
          kubernetesClusters(first: 5) { totalCount edges { node { id name } } }
        }
      }
    }
    maintainers(first: 200, orderBy: { field: NAME }) {
      totalCount
      edges {
        node {
          id name account email status
          groups(first: 20) { edges { node { id name } } }
          racks(first: 5) { totalCount edges { node { id name } } }
          hosts(first: 5) { totalCount edges { node { id name } } }
          nodes(first: 5) { totalCount edges { node { id name } } }
          clusters(first: 5) { totalCount edges { node { id name } } }
          virtualMachines(first: 5) { totalCount edges { node { id name } } }
          kubernetesClusters(first: 5) { totalCount edges { node { id name } } }
        }
      }
    }
  }
`);function d(){let[{data:e,error:t,fetching:o}]=n({query:u});if(t)return(0,s.jsxs)(s.Fragment,{children:[(0,s.jsx)(`h1`,{children:`Maintainers`}),(0,s.jsx)(r,{error:t})]});if(!e)return o?(0,s.jsx)(i,{}):null;let c=e.maintainerGroups.edges?.flatMap(e=>e?.node?[e.node]:[])??[],d=e.maintainers.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,s.jsxs)(`div`,{children:[(0,s.jsx)(`h1`,{children:`Maintainers`}),(0,s.jsxs)(`h2`,{children:[`Groups (`,e.maintainerGroups.totalCount,`)`]}),c.length===0?(0,s.jsx)(`p`,{className:`muted`,children:`No maintainer groups.`}):(0,s.jsxs)(`table`,{className:`ops-table`,"aria-label":`Maintainer groups`,children:[(0,s.jsx)(`thead`,{children:(0,s.jsxs)(`tr`,{children:[(0,s.jsx)(`th`,{children:`Group`}),(0,s.jsx)(`th`,{children:`Admin`}),(0,s.jsx)(`th`,{children:`Members`}),(0,s.jsx)(`th`,{children:`Responsible for`})]})}),(0,s.jsx)(`tbody`,{children:c.map(e=>(0,s.jsxs)(`tr`,{id:`group-${e.id}`,children:[(0,s.jsxs)(`td`,{children:[(0,s.jsx)(`strong`,{children:e.name}),` `,e.status!==`ACTIVE`&&(0,s.jsx)(a,{status:e.status}),e.description&&(0,s.jsx)(`div`,{className:`muted small`,children:e.description})]}),(0,s.jsx)(`td`,{children:e.admin?(0,s.jsx)(`a`,{href:`#maintainer-${e.admin.id}`,children:e.admin.name}):(0,s.jsx)(`span`,{className:`muted`,children:`—`})}),(0,s.jsxs)(`td`,{children:[e.members.edges?.flatMap(e=>e?.node?[e.node]:[]).map((e,t)=>(0,s.jsxs)(`span`,{children:[t>0&&`, `,(0,s.jsx)(`a`,{href:`#maintainer-${e.id}`,children:e.name})]},e.id)),e.members.totalCount===0&&(0,s.jsx)(`span`,{className:`muted`,children:`none`})]}),(0,s.jsx)(`td`,{children:(0,s.jsx)(l,{of:e})})]},e.id))})]}),(0,s.jsxs)(`h2`,{children:[`People (`,e.maintainers.totalCount,`)`]}),d.length===0?(0,s.jsx)(`p`,{className:`muted`,children:`No maintainers.`}):(0,s.jsxs)(`table`,{className:`ops-table`,"aria-label":`Maintainers`,children:[(0,s.jsx)(`thead`,{children:(0,s.jsxs)(`tr`,{children:[(0,s.jsx)(`th`,{children:`Maintainer`}),(0,s.jsx)(`th`,{children:`Account`}),(0,s.jsx)(`th`,{children:`Groups`}),(0,s.jsx)(`th`,{children:`Directly responsible for`})]})}),(0,s.jsx)(`tbody`,{children:d.map(e=>(0,s.jsxs)(`tr`,{id:`maintainer-${e.id}`,children:[(0,s.jsxs)(`td`,{children:[(0,s.jsx)(`strong`,{children:e.name}),` `,e.status!==`ACTIVE`&&(0,s.jsx)(a,{status:e.status}),e.email&&(0,s.jsx)(`div`,{className:`small`,children:(0,s.jsx)(`a`,{href:`mailto:${e.email}`,children:e.email})})]}),(0,s.jsx)(`td`,{children:(0,s.jsx)(`code`,{children:e.account})}),(0,s.jsx)(`td`,{children:e.groups.edges?.flatMap(e=>e?.node?[e.node]:[]).map((e,t)=>(0,s.jsxs)(`span`,{children:[t>0&&`, `,(0,s.jsx)(`a`,{href:`#group-${e.id}`,children:e.name})]},e.id))}),(0,s.jsx)(`td`,{children:(0,s.jsx)(l,{of:e})})]},e.id))})]})]})}export{d as default};