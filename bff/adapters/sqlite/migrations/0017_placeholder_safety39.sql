-- PLACEHOLDER for another helper's migration 0017 (safety39 drops this file on rebase).
SELECT 1;
