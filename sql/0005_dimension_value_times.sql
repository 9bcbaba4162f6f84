-- When each dimension value was current: the time of the event that carried it. A retried or late
-- batch of older events then cannot put an old email or name back over a newer one. NULL for rows
-- written before this migration: the next event with the field sets it.
ALTER TABLE workspace_users
  ADD COLUMN email_at timestamptz,
  ADD COLUMN name_at  timestamptz;
ALTER TABLE workspace_assistants ADD COLUMN name_at timestamptz;
ALTER TABLE workspace_projects   ADD COLUMN name_at timestamptz;
ALTER TABLE workspace_workflows  ADD COLUMN name_at timestamptz;
