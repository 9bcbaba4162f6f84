-- The audit log is listed newest first by time, then by id (rows of one transaction share their time),
-- and paged after the last row seen in that order: the index follows it.
CREATE INDEX audit_log_workspace_time_idx ON audit_log (workspace_id, at DESC, id DESC);
DROP INDEX audit_log_workspace_idx;
