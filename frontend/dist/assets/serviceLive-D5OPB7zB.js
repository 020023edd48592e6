import{d as e,o as t}from"./Problem-_3LBNcXe.js";import{t as n}from"./live-QE6iEJf2.js";t(`
  fragment ServiceEvent on RegionService {
    id
    name
    status
    statusReason
    statusChangedAt
    updatedAt
    replicas
    allowPartial
    tenant { id name }
    region { id name }
    flavor { id name }
    image { id name }
  }
`);var r=t(`
  subscription ServiceStatusChanged($id: ID, $tenantID: ID) {
    regionServiceStatusChanged(id: $id, tenantID: $tenantID) { ...ServiceEvent }
  }
`);function i(t={}){let[{data:i,error:a}]=e({query:r,variables:t},(e,t)=>n(e,t.regionServiceStatusChanged));return{events:i,error:a}}export{i as t};