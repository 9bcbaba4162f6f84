-- A sign-in attempt is counted as a failure before its password is checked (a reservation, so that
-- concurrent attempts cannot pass the limit together) and given back when the password was right:
-- `attempt` names the rows of one attempt. Subjects are now 'pair:<email>|<address>' and
-- 'address:<address>'; the former 'email:<email>' rows are no longer read and age out.
ALTER TABLE sign_in_failures ADD COLUMN attempt uuid;
CREATE INDEX sign_in_failures_attempt_idx ON sign_in_failures (attempt);
-- Rows past the window are deleted by age.
CREATE INDEX sign_in_failures_failed_at_idx ON sign_in_failures (failed_at);
