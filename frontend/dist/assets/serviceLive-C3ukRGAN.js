import{a as e,u as t}from"./Problem-CuvfRXt-.js";import{t as n}from"./live-QE6iEJf2.js";e(`
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
`);var r=e(`
  subscription ServiceStatusChanged($id: ID, $tenantID: ID) {
    regionServiceStatusChanged(id: $id, tenantID: $tenantID) { ...ServiceEvent }
  }
`);function i(e={}){let[{data:i,error:a}]=t({query:r,variables:e},(e,t)=>n(e,t.regionServiceStatusChanged));return{events:i,error:a}}export{i as t};