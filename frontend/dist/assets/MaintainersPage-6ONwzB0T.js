import{a as e,i as t,l as n,n as r}from"./Problem-CuvfRXt-.js";import{n as i,r as a}from"./index-C7CeH63O.js";import{t as o}from"./StatusBadge-DhLBs1VX.js";import{n as s}from"./format-eix3v1Vw.js";/* empty css            */var c=t(),l=[{key:`racks`,label:`Racks`,path:`/racks/`},{key:`hosts`,label:`Hosts`,path:`/hosts/`},{key:`nodes`,label:`Nodes`,path:`/nodes/`},{key:`clusters`,label:`Clusters`,path:`/clusters/`},{key:`virtualMachines`,label:`VMs`,path:`/vms/`},{key:`kubernetesClusters`,label:`Kubernetes clusters`,path:null}];function u({of:e}){let t=l.filter(t=>e[t.key].totalCount>0);return t.length===0?(0,c.jsx)(`span`,{className:`muted small`,children:`nothing directly`}):(0,c.jsx)(`ul`,{className:`resp`,children:t.map(t=>{let n=e[t.key],r=n.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,c.jsxs)(`li`,{children:[(0,c.jsxs)(`strong`,{children:[t.label,` (`,s(n.totalCount),`):`]}),` `,r.map((e,n)=>(0,c.jsxs)(`span`,{children:[n>0&&`, `,t.path?(0,c.jsx)(a,{to:t.path+e.id,children:e.name}):e.name]},e.id)),n.totalCount>r.length&&(0,c.jsxs)(`span`,{className:`muted`,children:[` and `,n.totalCount-r.length,` more`]})]},t.key)})})}var d=e(`
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
`);function f(){let[{data:e,error:t,fetching:a}]=n({query:d});if(t)return(0,c.jsxs)(c.Fragment,{children:[(0,c.jsx)(`h1`,{children:`Maintainers`}),(0,c.jsx)(r,{error:t})]});if(!e)return a?(0,c.jsx)(i,{}):null;let l=e.maintainerGroups.edges?.flatMap(e=>e?.node?[e.node]:[])??[],f=e.maintainers.edges?.flatMap(e=>e?.node?[e.node]:[])??[];return(0,c.jsxs)(`div`,{children:[(0,c.jsx)(`h1`,{children:`Maintainers`}),(0,c.jsxs)(`h2`,{children:[`Groups (`,s(e.maintainerGroups.totalCount),`)`]}),l.length===0?(0,c.jsx)(`p`,{className:`muted`,children:`No maintainer groups.`}):(0,c.jsxs)(`table`,{className:`ops-table`,"aria-label":`Maintainer groups`,children:[(0,c.jsx)(`thead`,{children:(0,c.jsxs)(`tr`,{children:[(0,c.jsx)(`th`,{children:`Group`}),(0,c.jsx)(`th`,{children:`Admin`}),(0,c.jsx)(`th`,{children:`Members`}),(0,c.jsx)(`th`,{children:`Responsible for`})]})}),(0,c.jsx)(`tbody`,{children:l.map(e=>(0,c.jsxs)(`tr`,{id:`group-${e.id}`,children:[(0,c.jsxs)(`td`,{children:[(0,c.jsx)(`strong`,{children:e.name}),` `,e.status!==`ACTIVE`&&(0,c.jsx)(o,{status:e.status}),e.description&&(0,c.jsx)(`div`,{className:`muted small`,children:e.description})]}),(0,c.jsx)(`td`,{children:e.admin?(0,c.jsx)(`a`,{href:`#maintainer-${e.admin.id}`,children:e.admin.name}):(0,c.jsx)(`span`,{className:`muted`,children:`—`})}),(0,c.jsxs)(`td`,{children:[e.members.edges?.flatMap(e=>e?.node?[e.node]:[]).map((e,t)=>(0,c.jsxs)(`span`,{children:[t>0&&`, `,(0,c.jsx)(`a`,{href:`#maintainer-${e.id}`,children:e.name})]},e.id)),e.members.totalCount===0&&(0,c.jsx)(`span`,{className:`muted`,children:`none`})]}),(0,c.jsx)(`td`,{children:(0,c.jsx)(u,{of:e})})]},e.id))})]}),(0,c.jsxs)(`h2`,{children:[`People (`,s(e.maintainers.totalCount),`)`]}),f.length===0?(0,c.jsx)(`p`,{className:`muted`,children:`No maintainers.`}):(0,c.jsxs)(`table`,{className:`ops-table`,"aria-label":`Maintainers`,children:[(0,c.jsx)(`thead`,{children:(0,c.jsxs)(`tr`,{children:[(0,c.jsx)(`th`,{children:`Maintainer`}),(0,c.jsx)(`th`,{children:`Account`}),(0,c.jsx)(`th`,{children:`Groups`}),(0,c.jsx)(`th`,{children:`Directly responsible for`})]})}),(0,c.jsx)(`tbody`,{children:f.map(e=>(0,c.jsxs)(`tr`,{id:`maintainer-${e.id}`,children:[(0,c.jsxs)(`td`,{children:[(0,c.jsx)(`strong`,{children:e.name}),` `,e.status!==`ACTIVE`&&(0,c.jsx)(o,{status:e.status}),e.email&&(0,c.jsx)(`div`,{className:`small`,children:(0,c.jsx)(`a`,{href:`mailto:${e.email}`,children:e.email})})]}),(0,c.jsx)(`td`,{children:(0,c.jsx)(`code`,{children:e.account})}),(0,c.jsx)(`td`,{children:e.groups.edges?.flatMap(e=>e?.node?[e.node]:[]).map((e,t)=>(0,c.jsxs)(`span`,{children:[t>0&&`, `,(0,c.jsx)(`a`,{href:`#group-${e.id}`,children:e.name})]},e.id))}),(0,c.jsx)(`td`,{children:(0,c.jsx)(u,{of:e})})]},e.id))})]})]})}export{f as default};