-- Modify "compute_nodes" table
ALTER TABLE "compute_nodes" ADD COLUMN "kernel_version" character varying NULL, ADD COLUMN "domain_type" character varying NULL;
