-- Modify "networks" table
ALTER TABLE "networks" ADD COLUMN "vrf" character varying NOT NULL DEFAULT 'global';
