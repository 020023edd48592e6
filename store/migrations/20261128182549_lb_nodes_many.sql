-- Modify "compute_nodes" table
ALTER TABLE "compute_nodes" DROP CONSTRAINT "compute_nodes_load_balancers_nodes";
-- Create "load_balancer_nodes" table
CREATE TABLE "load_balancer_nodes" ("load_balancer_id" bigint NOT NULL, "compute_node_id" bigint NOT NULL, PRIMARY KEY ("load_balancer_id", "compute_node_id"), CONSTRAINT "load_balancer_nodes_compute_node_id" FOREIGN KEY ("compute_node_id") REFERENCES "compute_nodes" ("id") ON UPDATE NO ACTION ON DELETE CASCADE, CONSTRAINT "load_balancer_nodes_load_balancer_id" FOREIGN KEY ("load_balancer_id") REFERENCES "load_balancers" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- Create index "load_balancer_nodes_compute_node_id" to table: "load_balancer_nodes"
CREATE INDEX "load_balancer_nodes_compute_node_id" ON "load_balancer_nodes" ("compute_node_id");
