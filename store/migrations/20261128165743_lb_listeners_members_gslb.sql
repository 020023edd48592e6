-- Modify "global_services" table
ALTER TABLE "global_services" ADD COLUMN "ttl" bigint NOT NULL DEFAULT 30, ADD COLUMN "status_reason" character varying NULL, ADD COLUMN "dns_answer" jsonb NULL;
-- Modify "load_balancers" table
ALTER TABLE "load_balancers" ADD COLUMN "listeners" jsonb NULL, ADD COLUMN "health_check_interval_ms" bigint NOT NULL DEFAULT 1000, ADD COLUMN "members" jsonb NULL, ADD COLUMN "node_states" jsonb NULL;
-- Modify "compute_nodes" table
ALTER TABLE "compute_nodes" ADD COLUMN "load_balancer_nodes" bigint NULL, ADD CONSTRAINT "compute_nodes_load_balancers_nodes" FOREIGN KEY ("load_balancer_nodes") REFERENCES "load_balancers" ("id") ON UPDATE NO ACTION ON DELETE SET NULL;
-- Create index "compute_nodes_load_balancer_nodes" to table: "compute_nodes"
CREATE INDEX "compute_nodes_load_balancer_nodes" ON "compute_nodes" ("load_balancer_nodes");
