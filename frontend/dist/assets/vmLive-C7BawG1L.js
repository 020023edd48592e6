import{d as e,o as t}from"./Problem-_3LBNcXe.js";import{t as n}from"./live-QE6iEJf2.js";import{t as r}from"./index-B_Yz7f47.js";t(`
  fragment VMEvent on VirtualMachine {
    id
    name
    status
    statusReason
    statusChangedAt
    updatedAt
    allocatedVcpus
    allocatedMemoryMB
    allocatedDiskGB
    tenant { id name }
    flavor { id name vcpus memoryMB }
    node @include(if: $infra) { id name }
    cluster @include(if: $infra) { id name }
    regionService { id }
  }
`);var i=t(`
  subscription VMStatusChanged($id: ID, $tenantID: ID, $clusterID: ID, $infra: Boolean!) {
    virtualMachineStatusChanged(id: $id, tenantID: $tenantID, clusterID: $clusterID) {
      ...VMEvent
    }
  }
`);function a(t={},a=!1){let{infra:o,known:s}=r(),[{data:c,error:l}]=e({query:i,variables:{...t,infra:o},pause:a||!s},(e,t)=>n(e,t.virtualMachineStatusChanged));return{events:c,error:l}}export{a as t};