-- The webhook log tells the truth (issue 16): the URL each delivery attempt went to (the
-- worker posts to the owner's CURRENT URL, which may differ from the one stored on the event).
-- Null for attempts recorded before this column.
ALTER TABLE "delivery_attempts" ADD COLUMN "url" TEXT;
