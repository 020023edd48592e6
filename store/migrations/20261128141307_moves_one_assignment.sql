-- Issue 24's leftovers before the unique indexes: of two assignments of one VM on one node
-- the older generation goes; of two live ones of a VM on different nodes, those not on the
-- VM's node are retired (desired ABSENT), so their agents remove the extra domain.
DELETE FROM "assignments" a USING "assignments" b WHERE a.vm_id IS NOT NULL AND a.vm_id = b.vm_id AND a.compute_node_assignments = b.compute_node_assignments AND (a.generation, a.id) < (b.generation, b.id);
UPDATE "assignments" a SET "desired_state" = 'ABSENT', "status" = 'PENDING', "generation" = a.generation + 1 WHERE a.vm_id IS NOT NULL AND a.desired_state <> 'ABSENT' AND EXISTS (SELECT 1 FROM "assignments" b WHERE b.vm_id = a.vm_id AND b.id <> a.id AND b.desired_state <> 'ABSENT') AND NOT EXISTS (SELECT 1 FROM "virtual_machines" v WHERE v.id = a.vm_id AND v.compute_node_virtual_machines = a.compute_node_assignments);
-- Create index "assignment_vm_live" to table: "assignments"
CREATE UNIQUE INDEX "assignment_vm_live" ON "assignments" ("vm_id") WHERE ((vm_id IS NOT NULL) AND ((desired_state)::text <> 'ABSENT'::text));
-- Create index "assignment_vm_node" to table: "assignments"
CREATE UNIQUE INDEX "assignment_vm_node" ON "assignments" ("vm_id", "compute_node_assignments");
-- Modify "compute_nodes" table
ALTER TABLE "compute_nodes" ADD COLUMN "drain_unmovable" jsonb NULL;
-- Modify "virtual_machines" table
ALTER TABLE "virtual_machines" ADD COLUMN "state_after_move" character varying NULL, ADD COLUMN "availability_zone_chosen" boolean NOT NULL DEFAULT false;
