-- Modify "clusters" table
ALTER TABLE "clusters" DROP CONSTRAINT "clusters_checks_clusters";
-- Create "check_clusters" table
CREATE TABLE "check_clusters" ("check_id" bigint NOT NULL, "cluster_id" bigint NOT NULL, PRIMARY KEY ("check_id", "cluster_id"), CONSTRAINT "check_clusters_check_id" FOREIGN KEY ("check_id") REFERENCES "checks" ("id") ON UPDATE NO ACTION ON DELETE CASCADE, CONSTRAINT "check_clusters_cluster_id" FOREIGN KEY ("cluster_id") REFERENCES "clusters" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- Create index "check_clusters_cluster_id" to table: "check_clusters"
CREATE INDEX "check_clusters_cluster_id" ON "check_clusters" ("cluster_id");
-- Modify "compute_nodes" table
ALTER TABLE "compute_nodes" DROP CONSTRAINT "compute_nodes_checks_nodes";
-- Create "check_nodes" table
CREATE TABLE "check_nodes" ("check_id" bigint NOT NULL, "compute_node_id" bigint NOT NULL, PRIMARY KEY ("check_id", "compute_node_id"), CONSTRAINT "check_nodes_check_id" FOREIGN KEY ("check_id") REFERENCES "checks" ("id") ON UPDATE NO ACTION ON DELETE CASCADE, CONSTRAINT "check_nodes_compute_node_id" FOREIGN KEY ("compute_node_id") REFERENCES "compute_nodes" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- Create index "check_nodes_compute_node_id" to table: "check_nodes"
CREATE INDEX "check_nodes_compute_node_id" ON "check_nodes" ("compute_node_id");
-- Keep what the one-check-per-node columns said: copy them into the join tables.
INSERT INTO "check_clusters" ("check_id", "cluster_id") SELECT "check_clusters", "id" FROM "clusters" WHERE "check_clusters" IS NOT NULL;
INSERT INTO "check_nodes" ("check_id", "compute_node_id") SELECT "check_nodes", "id" FROM "compute_nodes" WHERE "check_nodes" IS NOT NULL;
