-- Every instance keeps the hashes of the valid API keys in memory, to tell a valid key from a guess
-- without a lookup (failed-credential throttling). It learns of keys created or revoked anywhere (another
-- instance, the CLI) by reading this counter every second and then the keys changed since the version it
-- has. A trigger stamps each change with the next version: the counter's row stays locked until the
-- change commits, so versions become visible in order and a reader that sees version V sees every
-- change up to V.
CREATE TABLE api_key_changes (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  version   bigint NOT NULL
);
INSERT INTO api_key_changes (singleton, version) VALUES (true, 0);

ALTER TABLE api_keys ADD COLUMN change_version bigint NOT NULL DEFAULT 0;
CREATE INDEX api_keys_change_version_idx ON api_keys (change_version);

CREATE FUNCTION api_keys_stamp_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE api_key_changes SET version = version + 1 RETURNING version INTO NEW.change_version;
  RETURN NEW;
END
$$;

CREATE TRIGGER api_keys_stamp_change BEFORE INSERT OR UPDATE OF revoked_at ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_stamp_change();
