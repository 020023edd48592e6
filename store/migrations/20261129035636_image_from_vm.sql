-- Modify "assignments" table
ALTER TABLE "assignments" ADD COLUMN "image_assignments" bigint NULL, ADD CONSTRAINT "assignments_images_assignments" FOREIGN KEY ("image_assignments") REFERENCES "images" ("id") ON UPDATE NO ACTION ON DELETE SET NULL;
-- Create index "assignments_image_assignments" to table: "assignments"
CREATE INDEX "assignments_image_assignments" ON "assignments" ("image_assignments");
