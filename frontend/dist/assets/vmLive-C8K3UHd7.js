import{a as e,u as t}from"./Problem-CuvfRXt-.js";import{t as n}from"./live-QE6iEJf2.js";import{t as r}from"./index-C7CeH63O.js";e(`
  fragment VMEvent on VirtualMachine {
    id
    name
    status
    statusReason
    statusChangedAt
    guestState
    guestReadyAt
    guestHostname
    guestAddresses
    updatedAt
    allocatedVcpus
    allocatedMemoryMB
    allocatedDiskGB
    tenant { id name }
    flavor { id name vcpus memoryMB }
    node @include(if: $infra) { id name status }
    cluster @include(if: $infra) { id name }
    regionService { id }
  }
`);var i=e(`
  subscription VMStatusChanged($id: ID, $tenantID: ID, $clusterID: ID, $infra: Boolean!) {
    virtualMachineStatusChanged(id: $id, tenantID: $tenantID, clusterID: $clusterID) {
      ...VMEvent
    }
  }
`);function a(e={},a=!1){let{infra:o,known:s}=r(),[{data:c,error:l}]=t({query:i,variables:{...e,infra:o},pause:a||!s},(e,t)=>n(e,t.virtualMachineStatusChanged));return{events:c,error:l}}export{a as t};