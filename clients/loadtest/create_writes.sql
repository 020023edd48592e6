-- The writes of one createVirtualMachine placement, for pgbench (cmd/loadtest creates
-- -pgbench-dsn): the same statements as domain/placement/testdata/create_writes.sql — insert the
-- VM, the conditional updates of a node and of the tenant's quota as placement's commit
-- sends them, set the VM's node and cluster — except that the node and quota counters are
-- incremented by 0 (each UPDATE still writes a new row version, so the cost is the same) and
-- the VMs are named loadtest-<run>-pgbench-…: the harness deletes them afterwards and the server's
-- books stay exact. The harness passes the variables (-D).
\set node random(:min_node, :max_node)
BEGIN;
INSERT INTO virtual_machines (created_at, updated_at, name, type, boot_device, status, status_changed_at,
  revision, max_revision_history, allocated_vcpus, allocated_memory_mb, allocated_disk_gb,
  tenant_virtual_machines, region_virtual_machines, flavor_virtual_machines)
VALUES (now(), now(), 'loadtest-' || :run || '-pgbench-' || gen_random_uuid()::text, 'GENERAL', 'DISK', 'INITIALIZING', now(),
  1, 10, 0, 0, 0, :tenant, :region, :flavor) RETURNING id \gset vm_
UPDATE compute_nodes SET updated_at = now(), cpu_allocated = COALESCE(cpu_allocated, 0) + 0,
  memory_allocated_mb = COALESCE(memory_allocated_mb, 0) + 0, disk_allocated_gb = COALESCE(disk_allocated_gb, 0) + 0
WHERE id = :node AND cpu_allocated + 1 <= cpu_capacity AND memory_allocated_mb + 512 <= memory_capacity_mb
  AND disk_allocated_gb + 1 <= disk_capacity_gb;
UPDATE quota SET updated_at = now(), used_vcpus = COALESCE(used_vcpus, 0) + 0,
  used_memory_mb = COALESCE(used_memory_mb, 0) + 0, used_storage_gb = COALESCE(used_storage_gb, 0) + 0
WHERE id = :quota AND (vcpus = 0 OR used_vcpus + 1 <= vcpus) AND (memory_mb = 0 OR used_memory_mb + 512 <= memory_mb)
  AND (storage_gb = 0 OR used_storage_gb + 1 <= storage_gb);
UPDATE virtual_machines SET updated_at = now(), status_reason = 'placed; waiting to be provisioned',
  allocated_vcpus = 1, allocated_memory_mb = 512, allocated_disk_gb = 1,
  cluster_virtual_machines = :cluster, compute_node_virtual_machines = :node
WHERE id = :vm_id;
COMMIT;
