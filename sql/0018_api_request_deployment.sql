-- The upstream deployment that answered a forwarded request (or that its last attempt went to), by its name in
-- the routes (DESIGN "Upstreams: routes and deployments"): the models export's `deployment` column. NULL for
-- requests recorded before deployments were.
ALTER TABLE api_requests ADD COLUMN deployment text;
