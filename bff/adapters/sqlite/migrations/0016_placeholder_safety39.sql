-- PLACEHOLDER for another helper's migration 0016 (safety39 drops this file on rebase).
SELECT 1;
