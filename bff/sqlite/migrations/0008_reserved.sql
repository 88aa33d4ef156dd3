-- 0008: reserved for the intakes' encounter ids (another branch). This
-- placeholder only keeps the numbering gap-free on the worklist branch:
-- drop it when merging, the real 0008 takes its place.
SELECT 1;
