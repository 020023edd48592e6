-- Modify "images" table
ALTER TABLE "images" ADD COLUMN "upload_id" character varying NULL, ADD COLUMN "upload_expires_at" timestamptz NULL;
