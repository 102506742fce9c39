CREATE TABLE atrium.probe_ok (id int);
