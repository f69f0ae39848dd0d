-- Webhook signing secrets are sealed from now on (AES-256-GCM under the operator's key,
-- src/webhooks/secret-keys.ts): `v1:<key id>:<iv>:<ciphertext>`. SQL has no key, so the rows
-- written before are sealed by the service itself when it starts (Webhooks.sealStoredSecrets),
-- before it serves; from here on the database refuses a secret that is not sealed.
ALTER TABLE webhook_settings ADD CONSTRAINT webhook_settings_secret_sealed
  CHECK (secret IS NULL OR secret LIKE 'v1:%') NOT VALID;
ALTER TABLE webhook_settings ADD CONSTRAINT webhook_settings_previous_secret_sealed
  CHECK (previous_secret IS NULL OR previous_secret LIKE 'v1:%') NOT VALID;
