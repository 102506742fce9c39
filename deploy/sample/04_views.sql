-- Views over the sample data, as a reporting team would define them.

CREATE VIEW shop.order_summary AS
SELECT o.order_id,
       o.ordered_at,
       o.status,
       o.channel,
       c.customer_id,
       c.first_name || ' ' || c.last_name AS customer_name,
       a.city AS ship_to_city,
       a.country_code AS ship_to_country,
       count(oi.order_item_id) AS line_count,
       sum(oi.quantity) AS units,
       o.total_amount
FROM shop.orders o
JOIN shop.customers c USING (customer_id)
JOIN shop.addresses a ON a.address_id = o.shipping_address_id
JOIN shop.order_items oi USING (order_id)
GROUP BY o.order_id, c.customer_id, a.address_id;
COMMENT ON VIEW shop.order_summary IS 'One row per order with the customer, destination, number of lines and units, and total.';

CREATE VIEW hr.employee_directory AS
SELECT e.employee_id,
       e.first_name || ' ' || e.last_name AS full_name,
       e.email,
       j.title AS job_title,
       d.name AS department,
       l.city AS office_city,
       m.first_name || ' ' || m.last_name AS manager_name
FROM hr.employees e
JOIN hr.jobs j USING (job_id)
JOIN hr.departments d USING (department_id)
JOIN hr.locations l ON l.location_id = d.location_id
LEFT JOIN hr.employees m ON m.employee_id = e.manager_id
WHERE e.termination_date IS NULL;
COMMENT ON VIEW hr.employee_directory IS 'Current employees with job title, department, office city and manager.';

CREATE MATERIALIZED VIEW finance.monthly_revenue AS
SELECT date_trunc('month', i.issued_on)::date AS month,
       i.currency_code,
       count(*) AS invoices,
       sum(i.net_amount) AS net_revenue,
       sum(i.tax_amount) AS vat
FROM finance.invoices i
WHERE i.status <> 'void'
GROUP BY 1, 2;
COMMENT ON MATERIALIZED VIEW finance.monthly_revenue IS 'Invoiced net revenue and VAT per month and currency (refreshed by finance at month end).';

ANALYZE;
