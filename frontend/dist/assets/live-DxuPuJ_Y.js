import{a as e,u as t}from"./Problem-CuvfRXt-.js";function n(e,t=Date.now()){let n=e.drainState?e.drainState:null,r=n===`DRAINING`,i=null;if(r&&e.drainDeadline){let n=Date.parse(e.drainDeadline);Number.isNaN(n)||(i=Math.max(0,Math.round((n-t)/1e3)))}return{state:n,active:r,message:e.drainMessage??``,secondsLeft:i,unmovable:e.drainUnmovable??[]}}function r(e){return e.drainState===`DRAINING`?`DRAINING`:e.schedulable?`SCHEDULABLE`:`CORDONED`}var i=e(`
  subscription LiveNodeStatus($id: ID, $clusterID: ID) {
    nodeStatusChanged(id: $id, clusterID: $clusterID) {
      id updatedAt status statusReason schedulable cordonReason drainState drainMessage drainDeadline drainUnmovable { vmID vmName reason } lastHeartbeatAt
      cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB diskCapacityGB diskAllocatedGB
    }
  }
`);function a(e,n,r){let[{data:a}]=t({query:i,variables:{clusterID:e,id:n}},(e={},t)=>r&&!r.has(t.nodeStatusChanged.id)?e:{...e,[t.nodeStatusChanged.id]:t.nodeStatusChanged});return a??{}}function o(e,t){if(!t)return e;let n=t.updatedAt?Date.parse(t.updatedAt):NaN,r=e.updatedAt?Date.parse(e.updatedAt):NaN;return!Number.isNaN(r)&&!Number.isNaN(n)&&n<r?e:{...e,...t}}export{r as i,a as n,n as r,o as t};