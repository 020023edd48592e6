-- Modify "compute_nodes" table
ALTER TABLE "compute_nodes" ADD COLUMN "reserved_cpus" bigint NOT NULL DEFAULT 0, ADD COLUMN "numa_nodes" jsonb NULL, ADD COLUMN "exclusive_mask" bigint NOT NULL DEFAULT 0;
-- Modify "flavors" table
ALTER TABLE "flavors" ADD COLUMN "exclusive" character varying NOT NULL DEFAULT 'NONE';
-- Modify "virtual_machines" table
ALTER TABLE "virtual_machines" ADD COLUMN "exclusive_mask" bigint NOT NULL DEFAULT 0, ADD COLUMN "numa_node" bigint NULL;
