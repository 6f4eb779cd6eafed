-- Go-live rehearsals of a connector (docs/adr/0104-connector-rehearsals.md): one row per run,
-- its steps as JSON (each {name, status, detail, raw}); written by the run itself, outside any
-- money table: a rehearsal's payments belong to no merchant (docs/adr/0105).
CREATE TABLE connector_rehearsals (
  id           TEXT PRIMARY KEY,
  connector    TEXT NOT NULL,
  kind         TEXT NOT NULL,
  status       TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'passed', 'failed')),
  shop_id      TEXT,
  public_url   TEXT,
  steps        JSONB NOT NULL DEFAULT '[]'::jsonb,
  failed_steps INTEGER NOT NULL DEFAULT 0 CHECK (failed_steps >= 0),
  started_at   TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  finished_at  TIMESTAMPTZ(3),
  CHECK ((status = 'running') = (finished_at IS NULL))
);
CREATE INDEX connector_rehearsals_connector_started ON connector_rehearsals (connector, started_at);

-- Notifications a provider sent about a rehearsal's own objects (our id starts "rh-", which no
-- id of a merchant's object can: those are base62 only). Heard here, never applied to money.
CREATE TABLE connector_rehearsal_notices (
  connector   TEXT NOT NULL,
  event_key   TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id   TEXT NOT NULL,
  provider_ref TEXT NOT NULL,
  received_at TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (connector, event_key)
);
CREATE INDEX connector_rehearsal_notices_object ON connector_rehearsal_notices (object_id);
