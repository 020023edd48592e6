-- Modify "virtual_machines" table
ALTER TABLE "virtual_machines" ADD COLUMN "guest_state" character varying NOT NULL DEFAULT 'UNKNOWN', ADD COLUMN "guest_state_changed_at" timestamptz NULL, ADD COLUMN "guest_ready_at" timestamptz NULL, ADD COLUMN "guest_hostname" character varying NULL, ADD COLUMN "guest_addresses" jsonb NULL, ADD COLUMN "guest_credential_hash" character varying NULL, ADD COLUMN "guest_credential_expires_at" timestamptz NULL;
-- Create index "virtualmachine_guest_credential_hash" to table: "virtual_machines"
CREATE UNIQUE INDEX "virtualmachine_guest_credential_hash" ON "virtual_machines" ("guest_credential_hash");
-- Create index "virtualmachine_guest_state" to table: "virtual_machines"
CREATE INDEX "virtualmachine_guest_state" ON "virtual_machines" ("guest_state");
