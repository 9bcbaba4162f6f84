-- How each forwarded request ended, and whether it streamed: a cancelled stream is still billed for
-- what was generated until then, and failed requests stay visible in the models export.
ALTER TABLE api_requests
  ADD COLUMN outcome    text    NOT NULL DEFAULT 'completed' CHECK (outcome IN ('completed', 'failed', 'cancelled')),
  ADD COLUMN stream     boolean NOT NULL DEFAULT false,
  ADD COLUMN request_id text;
