package testdb

// ShopSchema is a small database for retrieval and question tests: a join
// path through a bridge table (shop.order_lines), values only the value
// index can connect to a question ("Ford Motor Company"), and an unrelated
// schema (zoo) for the retriever to leave out.
const ShopSchema = `
CREATE SCHEMA shop;
CREATE TABLE shop.customers (customer_id int PRIMARY KEY, full_name text, city text);
CREATE TABLE shop.orders (order_id int PRIMARY KEY, customer_id int REFERENCES shop.customers, placed_on date);
CREATE TABLE shop.order_lines (order_id int REFERENCES shop.orders, product_id int, quantity int);
CREATE TABLE shop.products (product_id int PRIMARY KEY, title text, maker text);
ALTER TABLE shop.order_lines ADD FOREIGN KEY (product_id) REFERENCES shop.products;
INSERT INTO shop.customers VALUES (1, 'Ada Lovelace', 'London'), (2, 'Kyle Smith', 'Aruba');
INSERT INTO shop.products VALUES (1, 'Widget', 'Ford Motor Company'), (2, 'Gadget', 'Acme');
INSERT INTO shop.orders VALUES (1, 1, '2024-01-01'), (2, 2, '2024-02-02');
INSERT INTO shop.order_lines VALUES (1, 1, 3), (2, 2, 1);
CREATE SCHEMA zoo;
CREATE TABLE zoo.animals (animal_id int PRIMARY KEY, species text, keeper text);
CREATE TABLE zoo.keepers (keeper_id int PRIMARY KEY, name text);
INSERT INTO zoo.animals VALUES (1, 'zebra', 'Tom');
`
