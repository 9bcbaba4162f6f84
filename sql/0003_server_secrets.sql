-- Secrets the instances of one deployment must share and nobody has to configure: today the key of
-- signed export download links and of user pseudonyms (used when EXPORT_SIGNING_SECRET is unset).
-- The first instance to start inserts a random value; every other instance reads that row
-- (INSERT … ON CONFLICT DO NOTHING, then SELECT), so all of them sign and verify alike.
-- Whoever can read this table can forge download links: deployments that keep the database apart
-- from its readers set EXPORT_SIGNING_SECRET instead.

CREATE TABLE server_secrets (
  name       text        PRIMARY KEY,
  value      text        NOT NULL CHECK (length(value) >= 32),
  created_at timestamptz NOT NULL DEFAULT now()
);
