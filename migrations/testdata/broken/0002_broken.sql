CREATE TABLE atrium.probe_half (id int);
INSERT INTO atrium.probe_half VALUES (1);
SELECT no_such_function();
