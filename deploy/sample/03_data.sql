-- Sample rows, generated deterministically with the pg_temp helpers of
-- 02_helpers.sql. Row counts are in the comment of each block.

------------------------------------------------------------------------------
-- hr
------------------------------------------------------------------------------

-- 12 offices and sites.
INSERT INTO hr.locations (location_id, city, country_code, street, postal_code, opened_on)
SELECT n, v.city, v.cc, v.street, v.postal, date '2010-01-01' + (n * 211) % 4000
FROM (VALUES
    (1, 'Berlin', 'DE', 'Friedrichstraße 120', '10117'),
    (2, 'Munich', 'DE', 'Leopoldstraße 44', '80802'),
    (3, 'Hamburg', 'DE', 'Am Sandtorkai 5', '20457'),
    (4, 'Paris', 'FR', '18 Rue de Rivoli', '75004'),
    (5, 'Lyon', 'FR', '7 Quai Perrache', '69002'),
    (6, 'Amsterdam', 'NL', 'Keizersgracht 300', '1016 EZ'),
    (7, 'Rotterdam', 'NL', 'Waalhaven 12', '3089 JH'),
    (8, 'Madrid', 'ES', 'Calle de Alcalá 77', '28009'),
    (9, 'Barcelona', 'ES', 'Carrer de Pallars 190', '08005'),
    (10, 'Milan', 'IT', 'Via Tortona 31', '20144'),
    (11, 'Vienna', 'AT', 'Mariahilfer Straße 88', '1070'),
    (12, 'Dublin', 'IE', '25 Grand Canal Quay', 'D02 X285')
) AS v(n, city, cc, street, postal);

-- 12 departments; managers are set once employees exist.
INSERT INTO hr.departments (department_id, name, location_id, cost_center)
VALUES
    (1, 'Executive Office', 1, 'CC-100'),
    (2, 'Engineering', 1, 'CC-110'),
    (3, 'Sales', 4, 'CC-120'),
    (4, 'Customer Support', 12, 'CC-130'),
    (5, 'Marketing', 6, 'CC-140'),
    (6, 'Finance', 2, 'CC-150'),
    (7, 'Human Resources', 2, 'CC-160'),
    (8, 'Logistics', 3, 'CC-170'),
    (9, 'Purchasing', 10, 'CC-180'),
    (10, 'Legal', 11, 'CC-190'),
    (11, 'IT Operations', 8, 'CC-200'),
    (12, 'Data & Analytics', 9, 'CC-210');

-- 24 jobs: a lead and a staff role for each department, job_id = 2*dept - 1
-- (lead) and 2*dept (staff).
INSERT INTO hr.jobs (job_id, title, job_family, min_salary, max_salary)
VALUES
    (1, 'Chief Executive Officer', 'Executive', 180000, 260000),
    (2, 'Executive Assistant', 'Executive', 42000, 58000),
    (3, 'Engineering Manager', 'Engineering', 95000, 130000),
    (4, 'Software Engineer', 'Engineering', 55000, 95000),
    (5, 'Head of Sales', 'Sales', 90000, 125000),
    (6, 'Account Executive', 'Sales', 45000, 75000),
    (7, 'Support Team Lead', 'Support', 52000, 68000),
    (8, 'Customer Support Agent', 'Support', 32000, 45000),
    (9, 'Marketing Director', 'Marketing', 85000, 115000),
    (10, 'Marketing Specialist', 'Marketing', 42000, 62000),
    (11, 'Chief Financial Officer', 'Finance', 140000, 190000),
    (12, 'Accountant', 'Finance', 45000, 65000),
    (13, 'HR Director', 'Human Resources', 85000, 110000),
    (14, 'HR Business Partner', 'Human Resources', 48000, 68000),
    (15, 'Logistics Manager', 'Operations', 65000, 85000),
    (16, 'Warehouse Associate', 'Operations', 28000, 38000),
    (17, 'Purchasing Manager', 'Operations', 65000, 88000),
    (18, 'Buyer', 'Operations', 42000, 58000),
    (19, 'General Counsel', 'Legal', 120000, 160000),
    (20, 'Legal Counsel', 'Legal', 65000, 95000),
    (21, 'IT Operations Manager', 'Engineering', 80000, 105000),
    (22, 'Systems Administrator', 'Engineering', 48000, 70000),
    (23, 'Head of Data', 'Data', 95000, 125000),
    (24, 'Data Analyst', 'Data', 50000, 78000);

-- 260 employees. Employees 1-12 lead departments 1-12 and report to the CEO
-- (employee 1); everyone else works in a department (support and logistics
-- are the largest) and reports to its head.
INSERT INTO hr.employees (employee_id, first_name, last_name, email, phone, hire_date,
                          termination_date, job_id, department_id, manager_id, employment_type)
SELECT i, fn, ln,
       lower(translate(fn || '.' || replace(replace(ln, ' ', ''), '''', ''), 'üéáíóñàèöäåøčšžł', 'ueaionaeoaaocszl')) || '.' || i || '@atrium-example.com',
       '+49 30 ' || lpad((1000000 + pg_temp.h(i, 5, 8999999))::text, 7, '0'),
       hd,
       CASE WHEN i > 12 AND pg_temp.h(i, 6, 100) < 9 THEN least(hd + 200 + pg_temp.h(i, 7, 900), date '2025-06-20') END,
       CASE WHEN i <= 12 THEN 2 * dept - 1 ELSE 2 * dept END,
       dept,
       CASE WHEN i = 1 THEN NULL WHEN i <= 12 THEN 1 ELSE dept END,
       CASE WHEN pg_temp.h(i, 8, 100) < 80 OR i <= 12 THEN 'full-time'
            WHEN pg_temp.h(i, 8, 100) < 92 THEN 'part-time' ELSE 'contractor' END
FROM (
    SELECT i,
           pg_temp.pick(pg_temp.first_names(), i, 1) AS fn,
           pg_temp.pick(pg_temp.last_names(), i, 2) AS ln,
           CASE WHEN i <= 12 THEN date '2015-03-01' + i * 47
                ELSE date '2025-06-01' - pg_temp.h(i, 3, 2900) END AS hd,
           CASE WHEN i <= 12 THEN i
                ELSE (ARRAY[2,2,2,2,2,3,3,3,4,4,4,4,4,4,4,5,5,6,6,7,8,8,8,8,9,10,11,11,12,12])[1 + pg_temp.h(i, 4, 30)] END AS dept
    FROM generate_series(1, 260) AS i
) AS e;

UPDATE hr.departments SET manager_id = department_id;

-- Salary history: 1-4 raises per employee since hiring.
INSERT INTO hr.salaries (salary_id, employee_id, amount, currency_code, valid_from, valid_to)
SELECT row_number() OVER (ORDER BY employee_id, valid_from), employee_id, amount, 'EUR', valid_from,
       lead(valid_from) OVER (PARTITION BY employee_id ORDER BY valid_from) - 1
FROM (
    SELECT e.employee_id,
           round((j.min_salary + (j.max_salary - j.min_salary) * pg_temp.frac(e.employee_id, 11) * 0.7)
                 * (1 + 0.035 * k), -2) AS amount,
           e.hire_date + k * 365 AS valid_from
    FROM hr.employees e
    JOIN hr.jobs j USING (job_id)
    CROSS JOIN generate_series(0, 3) AS k
    WHERE k <= pg_temp.h(e.employee_id, 12, 4)
      AND e.hire_date + k * 365 <= coalesce(e.termination_date, date '2025-06-30')
) AS s;

-- 650 leave requests over the last two years.
INSERT INTO hr.leave_requests (leave_request_id, employee_id, leave_type, start_date, end_date, status, approved_by)
SELECT i, e.employee_id, lt, sd, sd + CASE lt WHEN 'parental' THEN 30 + pg_temp.h(i, 25, 60)
                                          WHEN 'sick' THEN pg_temp.h(i, 25, 5)
                                          ELSE pg_temp.h(i, 25, 12) END,
       st, CASE WHEN st IN ('approved', 'rejected') THEN coalesce(e.manager_id, 1) END
FROM (
    SELECT i,
           1 + pg_temp.h(i, 21, 260) AS emp,
           (ARRAY['vacation','vacation','vacation','vacation','sick','sick','parental','unpaid','training','training'])[1 + pg_temp.h(i, 22, 10)] AS lt,
           (date '2025-06-30' - pg_temp.h(i, 23, 730)) AS sd,
           (ARRAY['approved','approved','approved','approved','approved','approved','rejected','cancelled','requested'])[1 + pg_temp.h(i, 24, 9)] AS st
    FROM generate_series(1, 650) AS i
) AS r
JOIN hr.employees e ON e.employee_id = r.emp;

-- Reviews for each half-year an employee was with the company.
INSERT INTO hr.performance_reviews (review_id, employee_id, reviewer_id, review_period, rating, summary)
SELECT row_number() OVER (ORDER BY p.period, e.employee_id), e.employee_id, e.manager_id, p.period,
       (ARRAY[1,2,2,3,3,3,3,3,4,4,4,4,4,4,5,5])[1 + pg_temp.h(e.employee_id * 10 + p.n, 31, 16)],
       pg_temp.pick(ARRAY['Consistently meets goals and helps the team.',
                          'Strong delivery this period; should delegate more.',
                          'Needs to improve time management and follow-up.',
                          'Excellent customer focus, praised by colleagues.',
                          'Solid technical skills; communication can improve.',
                          'Exceeded targets; ready for more responsibility.',
                          'Did not meet several goals; improvement plan agreed.'], e.employee_id * 10 + p.n, 32)
FROM hr.employees e
CROSS JOIN (VALUES (1, '2023-H2', date '2023-12-31'), (2, '2024-H1', date '2024-06-30'),
                   (3, '2024-H2', date '2024-12-31'), (4, '2025-H1', date '2025-06-30')) AS p(n, period, period_end)
WHERE e.manager_id IS NOT NULL
  AND e.hire_date < p.period_end - 90
  AND (e.termination_date IS NULL OR e.termination_date > p.period_end);

-- 15 training courses.
INSERT INTO hr.training_courses (course_id, title, provider, hours, cost)
VALUES
    (1, 'Leading High-Performing Teams', 'Northbridge Academy', 16, 1450),
    (2, 'Effective Feedback Conversations', 'Northbridge Academy', 6, 520),
    (3, 'PostgreSQL Performance Tuning', 'DataCraft Training', 24, 1900),
    (4, 'Advanced SQL for Analysts', 'DataCraft Training', 12, 890),
    (5, 'GDPR Essentials', 'LexCampus', 4, 250),
    (6, 'Workplace Health and Safety', 'SafeWork Institute', 3, 120),
    (7, 'Forklift Operation Certificate', 'SafeWork Institute', 20, 780),
    (8, 'Negotiation Skills for Buyers', 'Meridian Business School', 14, 1200),
    (9, 'De-escalation in Customer Support', 'ServiceFirst', 8, 460),
    (10, 'Consultative Selling', 'Meridian Business School', 16, 1350),
    (11, 'IFRS Update', 'LexCampus', 8, 690),
    (12, 'Cloud Security Fundamentals', 'DataCraft Training', 16, 1500),
    (13, 'Presentation Skills', 'Northbridge Academy', 6, 480),
    (14, 'Intercultural Communication', 'ServiceFirst', 5, 300),
    (15, 'Search Engine Marketing', 'Meridian Business School', 10, 820);

-- About 700 enrolments (many-to-many between employees and courses).
INSERT INTO hr.course_enrollments (employee_id, course_id, enrolled_on, completed_on, score)
SELECT DISTINCT ON (emp, course) emp, course, enrolled,
       CASE WHEN pg_temp.h(i, 43, 10) < 8 AND enrolled < date '2025-06-01' THEN enrolled + 14 + pg_temp.h(i, 44, 40) END,
       CASE WHEN pg_temp.h(i, 43, 10) < 8 AND enrolled < date '2025-06-01' THEN 55 + pg_temp.h(i, 45, 46) END
FROM (
    SELECT i, 1 + pg_temp.h(i, 41, 260) AS emp, 1 + pg_temp.h(i, 42, 15) AS course,
           date '2025-06-30' - pg_temp.h(i, 46, 720) AS enrolled
    FROM generate_series(1, 760) AS i
) AS x
ORDER BY emp, course, i;

------------------------------------------------------------------------------
-- shop: catalogue
------------------------------------------------------------------------------

-- 6 top-level categories and 16 subcategories (22 in all).
INSERT INTO shop.categories (category_id, name, parent_id, description)
VALUES
    (1, 'Electronics', NULL, 'Phones, computers, audio and accessories'),
    (2, 'Home & Kitchen', NULL, 'Cookware, appliances and home furnishing'),
    (3, 'Sports & Outdoors', NULL, 'Equipment for fitness, cycling and camping'),
    (4, 'Books', NULL, 'Printed books and e-books'),
    (5, 'Fashion', NULL, 'Clothing, shoes and bags'),
    (6, 'Toys & Games', NULL, 'Toys, board games and puzzles'),
    (7, 'Headphones', 1, 'Wired and wireless headphones and earbuds'),
    (8, 'Laptops', 1, 'Notebooks and ultrabooks'),
    (9, 'Smartphone Accessories', 1, 'Cases, chargers and cables'),
    (10, 'Cookware', 2, 'Pans, pots and baking trays'),
    (11, 'Coffee Machines', 2, 'Espresso machines, grinders and filters'),
    (12, 'Bedding', 2, 'Duvets, pillows and sheets'),
    (13, 'Cycling', 3, 'Bikes, helmets and bike parts'),
    (14, 'Camping', 3, 'Tents, sleeping bags and stoves'),
    (15, 'Fitness', 3, 'Weights, mats and trackers'),
    (16, 'Fiction', 4, 'Novels and short stories'),
    (17, 'Cookbooks', 4, 'Recipes and food writing'),
    (18, 'Running Shoes', 5, 'Road and trail running shoes'),
    (19, 'Jackets', 5, 'Rain, winter and softshell jackets'),
    (20, 'Bags', 5, 'Backpacks, totes and travel bags'),
    (21, 'Board Games', 6, 'Strategy and family board games'),
    (22, 'Building Sets', 6, 'Construction toys and bricks');

-- 30 suppliers.
INSERT INTO shop.suppliers (supplier_id, company_name, contact_name, email, country_code, rating)
SELECT n, name, pg_temp.pick(pg_temp.first_names(), n, 51) || ' ' || pg_temp.pick(pg_temp.last_names(), n, 52),
       'orders@' || lower(regexp_replace(name, '[^A-Za-z]+', '', 'g')) || '.example',
       cc, 2.5 + pg_temp.h(n, 53, 26) / 10.0
FROM (VALUES
    (1, 'Nordlicht Electronics GmbH', 'DE'), (2, 'Baltic Audio AB', 'SE'), (3, 'Pixelwerk Computers', 'DE'),
    (4, 'Shenzhen Bright Accessories Ltd', 'CN'), (5, 'Cucina Italia S.r.l.', 'IT'), (6, 'Bialetti Partners', 'IT'),
    (7, 'Rheinland Haushaltswaren', 'DE'), (8, 'Duvet & Co', 'FR'), (9, 'Velo Components BV', 'NL'),
    (10, 'Alpine Outdoor Supply', 'AT'), (11, 'Trailhead Camping Gear', 'SE'), (12, 'IronCore Fitness', 'PL'),
    (13, 'Meridian Books Distribution', 'GB'), (14, 'Editions du Quai', 'FR'), (15, 'Stride Footwear SL', 'ES'),
    (16, 'Stormproof Apparel', 'DK'), (17, 'Carry All Bags', 'PT'), (18, 'Boardroom Games', 'DE'),
    (19, 'Brickhouse Toys', 'DK'), (20, 'Evergreen Paper Goods', 'CZ'), (21, 'Lumen Optics', 'NL'),
    (22, 'Kettle & Steam Appliances', 'GB'), (23, 'Summit Textiles', 'IT'), (24, 'Fjord Home', 'NO'),
    (25, 'Atlas Logistics Trading', 'BE'), (26, 'Sierra Sports Import', 'ES'), (27, 'Volta Power Accessories', 'CN'),
    (28, 'Leaf & Page Publishers', 'IE'), (29, 'Playwise Learning', 'NL'), (30, 'Café Artisan Supply', 'FR')
) AS s(n, name, cc);

-- 240 products: an adjective and a noun that fit the subcategory.
INSERT INTO shop.products (product_id, sku, name, category_id, list_price, unit_cost, weight_kg, is_active, launched_on)
SELECT i, 'SKU-' || lpad(i::text, 5, '0'),
       pg_temp.pick(ARRAY['Pro','Classic','Ultra','Compact','Premium','Eco','Nova','Urban','Summit','Aero','Zen','Flex'], i, 61)
         || ' ' || pg_temp.pick(c.nouns, i, 62)
         || CASE WHEN pg_temp.h(i, 63, 3) = 0 THEN ' ' || (2 + pg_temp.h(i, 64, 8))::text ELSE '' END,
       c.category_id, price, round(price * (0.42 + pg_temp.frac(i, 65) * 0.25), 2),
       round(c.weight * (0.5 + pg_temp.frac(i, 66)), 2),
       pg_temp.h(i, 67, 100) >= 8,
       date '2025-06-30' - 60 - pg_temp.h(i, 68, 1800)
FROM generate_series(1, 240) AS i
CROSS JOIN LATERAL (
    SELECT v.category_id, v.nouns, v.weight,
           round(v.base * (0.6 + pg_temp.frac(i, 69) * 1.2), 0) - 0.01 AS price
    FROM (VALUES
        (7, ARRAY['Wireless Headphones','Noise-Cancelling Headphones','Earbuds','Studio Monitor Headphones','Sport Earbuds'], 129.0, 0.3),
        (8, ARRAY['Laptop 14"','Ultrabook 13"','Gaming Laptop 16"','Business Notebook 15"'], 1099.0, 1.6),
        (9, ARRAY['Phone Case','USB-C Charger 65W','Braided Cable','Power Bank 20000mAh','Car Mount'], 29.0, 0.15),
        (10, ARRAY['Frying Pan 28cm','Cast Iron Casserole','Saucepan Set','Baking Tray','Wok'], 59.0, 1.8),
        (11, ARRAY['Espresso Machine','Burr Coffee Grinder','Milk Frother','Pour-Over Kettle'], 249.0, 4.0),
        (12, ARRAY['Down Duvet','Memory Foam Pillow','Linen Sheet Set','Weighted Blanket'], 89.0, 1.5),
        (13, ARRAY['Road Bike Helmet','Bike Light Set','Cycling Gloves','Gravel Tyre','Bike Lock'], 49.0, 0.6),
        (14, ARRAY['2-Person Tent','Sleeping Bag','Camping Stove','Trekking Poles','Headlamp'], 119.0, 1.9),
        (15, ARRAY['Yoga Mat','Adjustable Dumbbells','Fitness Tracker','Resistance Bands','Kettlebell 12kg'], 69.0, 2.5),
        (16, ARRAY['Crime Novel','Fantasy Saga','Literary Fiction Hardcover','Short Story Collection'], 18.0, 0.5),
        (17, ARRAY['Italian Cookbook','Vegan Kitchen','Baking Masterclass','Street Food Atlas'], 29.0, 0.9),
        (18, ARRAY['Road Running Shoes','Trail Running Shoes','Racing Flats','Cushioned Trainers'], 129.0, 0.7),
        (19, ARRAY['Rain Jacket','Down Jacket','Softshell Jacket','Windbreaker'], 149.0, 0.8),
        (20, ARRAY['Laptop Backpack','Weekender Bag','Tote Bag','Hip Pack','Carry-On Suitcase'], 79.0, 1.2),
        (21, ARRAY['Strategy Board Game','Family Card Game','Cooperative Board Game','Chess Set'], 39.0, 1.1),
        (22, ARRAY['Castle Building Set','Space Station Building Set','City Bricks Box','Robot Kit'], 59.0, 1.3)
    ) AS v(category_id, nouns, base, weight)
    WHERE v.category_id = 7 + pg_temp.h(i, 60, 16)
) AS c;

-- Each product from one to three suppliers; the first is preferred.
INSERT INTO shop.product_suppliers (product_id, supplier_id, supplier_sku, lead_time_days, is_preferred)
SELECT DISTINCT ON (p.product_id, s) p.product_id, s,
       'S' || s || '-' || lpad((p.product_id * 7 + k)::text, 6, '0'),
       3 + pg_temp.h(p.product_id * 5 + k, 72, 40), k = 0
FROM shop.products p
CROSS JOIN generate_series(0, 2) AS k
CROSS JOIN LATERAL (SELECT 1 + pg_temp.h(p.product_id * 5 + k, 71, 30) AS s) AS x
WHERE k <= pg_temp.h(p.product_id, 70, 3)
ORDER BY p.product_id, s, k;

-- 6 warehouses at company sites.
INSERT INTO shop.warehouses (warehouse_id, name, location_id, capacity_units)
VALUES
    (1, 'Hamburg Central Warehouse', 3, 120000),
    (2, 'Rotterdam Port Hub', 7, 90000),
    (3, 'Lyon South Depot', 5, 45000),
    (4, 'Madrid Iberia Depot', 8, 40000),
    (5, 'Milan Fulfilment Centre', 10, 50000),
    (6, 'Dublin Returns Centre', 12, 15000);

-- Stock of most products in four or five of the warehouses.
INSERT INTO shop.inventory (warehouse_id, product_id, quantity_on_hand, reorder_level, last_counted_on)
SELECT w.warehouse_id, p.product_id,
       pg_temp.h(p.product_id * 10 + w.warehouse_id, 81, 400),
       20 + 10 * pg_temp.h(p.product_id * 10 + w.warehouse_id, 82, 6),
       date '2025-06-30' - pg_temp.h(p.product_id * 10 + w.warehouse_id, 83, 90)
FROM shop.products p
CROSS JOIN shop.warehouses w
WHERE pg_temp.h(p.product_id * 10 + w.warehouse_id, 80, 4) > 0;

------------------------------------------------------------------------------
-- shop: customers and orders
------------------------------------------------------------------------------

-- 900 customers who signed up over the last three years.
INSERT INTO shop.customers (customer_id, first_name, last_name, email, phone, signup_date, loyalty_tier, marketing_opt_in)
SELECT i, fn, ln,
       lower(translate(fn || '.' || replace(replace(ln, ' ', ''), '''', ''), 'üéáíóñàèöäåøčšžł', 'ueaionaeoaaocszl')) || i || '@' ||
         pg_temp.pick(ARRAY['mailbox.example','webpost.example','example.com','inbox.example','posteo.example'], i, 93),
       CASE WHEN pg_temp.h(i, 94, 10) < 7 THEN '+' || (30 + pg_temp.h(i, 95, 20)) || ' ' || (100000000 + pg_temp.h(i, 96, 899999999)) END,
       date '2025-06-25' - pg_temp.h(i, 97, 1100),
       (ARRAY['none','none','none','none','none','silver','silver','silver','gold','gold','platinum'])[1 + pg_temp.h(i, 98, 11)],
       pg_temp.h(i, 99, 100) < 55
FROM (
    SELECT i, pg_temp.pick(pg_temp.first_names(), i, 91) AS fn, pg_temp.pick(pg_temp.last_names(), i, 92) AS ln
    FROM generate_series(1, 900) AS i
) AS c;

-- A billing and a shipping address for every customer; a third of them have
-- a second shipping address (work, family).
INSERT INTO shop.addresses (address_id, customer_id, kind, street, city, postal_code, country_code)
SELECT row_number() OVER (ORDER BY c.customer_id, k), c.customer_id,
       CASE WHEN k = 0 THEN 'billing' ELSE 'shipping' END,
       pg_temp.pick(pg_temp.streets(), c.customer_id * 3 + k, 101) || ' ' || (1 + pg_temp.h(c.customer_id * 3 + k, 102, 180)),
       split_part(city, '|', 1),
       split_part(city, '|', 2) || lpad(pg_temp.h(c.customer_id * 3 + k, 103, 1000)::text, 3, '0'),
       split_part(city, '|', 3)
FROM shop.customers c
CROSS JOIN generate_series(0, 2) AS k
-- Shipping usually goes to the billing city; the second shipping address may not.
CROSS JOIN LATERAL (SELECT pg_temp.pick(pg_temp.cities(), c.customer_id * CASE WHEN k = 2 THEN 3 ELSE 1 END, 100) AS city) AS x
WHERE k < 2 OR pg_temp.h(c.customer_id, 104, 3) = 0;

-- 25 coupons.
INSERT INTO shop.coupons (coupon_id, code, discount_percent, valid_from, valid_to, max_uses)
SELECT n, code || pct || '-' || lpad(n::text, 2, '0'), pct, vf, vf + dur, CASE WHEN n % 3 = 0 THEN NULL ELSE 100 * (1 + n % 5) END
FROM (
    SELECT n,
           (ARRAY['WELCOME','SPRING','SUMMER','AUTUMN','WINTER','BLACKFRIDAY','LOYALTY','BIRTHDAY','FLASH','STUDENT'])[1 + (n - 1) % 10] AS code,
           (ARRAY[5, 10, 15, 20, 25, 30])[1 + pg_temp.h(n, 111, 6)] AS pct,
           date '2023-07-01' + (n - 1) * 29 AS vf,
           (ARRAY[14, 30, 60, 90])[1 + pg_temp.h(n, 112, 4)] AS dur
    FROM generate_series(1, 25) AS n
) AS c;

-- 3,200 orders, each placed after the customer signed up and within the last
-- two years. Status follows the order's age. Totals are filled in below.
INSERT INTO shop.orders (order_id, customer_id, shipping_address_id, coupon_id, ordered_at, status, channel, total_amount)
SELECT o.i, o.cust,
       (SELECT max(a.address_id) FROM shop.addresses a WHERE a.customer_id = o.cust AND a.kind = 'shipping'),
       (SELECT cp.coupon_id FROM shop.coupons cp
         WHERE o.ts::date BETWEEN cp.valid_from AND cp.valid_to AND pg_temp.h(o.i, 125, 100) < 20
         ORDER BY cp.coupon_id LIMIT 1),
       o.ts,
       CASE WHEN pg_temp.h(o.i, 121, 100) < 5 THEN 'cancelled'
            WHEN pg_temp.h(o.i, 121, 100) < 9 AND o.ts < pg_temp.anchor() - interval '20 days' THEN 'returned'
            WHEN o.ts > pg_temp.anchor() - interval '12 hours' THEN 'pending'
            WHEN o.ts > pg_temp.anchor() - interval '2 days' THEN 'paid'
            WHEN o.ts > pg_temp.anchor() - interval '5 days' THEN 'shipped'
            ELSE 'delivered' END,
       (ARRAY['web','web','web','web','web','web','mobile','mobile','mobile','phone'])[1 + pg_temp.h(o.i, 122, 10)],
       0
FROM (
    SELECT i, c.customer_id AS cust,
           greatest(c.signup_date::timestamptz, pg_temp.anchor() - interval '730 days')
             + (pg_temp.anchor() - greatest(c.signup_date::timestamptz, pg_temp.anchor() - interval '730 days'))
               * pg_temp.frac(i, 123) AS ts
    FROM generate_series(1, 3200) AS i
    -- Loyal customers order more: the lower a customer's id, the likelier.
    JOIN shop.customers c ON c.customer_id = 1 + floor(900 * power(pg_temp.frac(i, 120), 1.6))::int
) AS o;
UPDATE shop.orders SET ordered_at = date_trunc('second', ordered_at);

-- One to four lines per order, distinct products.
INSERT INTO shop.order_items (order_item_id, order_id, product_id, quantity, unit_price, discount_amount)
SELECT row_number() OVER (ORDER BY o.order_id, k), o.order_id, p.product_id,
       (ARRAY[1,1,1,1,1,2,2,3])[1 + pg_temp.h(o.order_id * 4 + k, 132, 8)],
       p.list_price,
       CASE WHEN o.coupon_id IS NOT NULL THEN round(p.list_price * cp.discount_percent / 100.0, 2) ELSE 0 END
FROM shop.orders o
LEFT JOIN shop.coupons cp USING (coupon_id)
CROSS JOIN generate_series(0, 3) AS k
JOIN shop.products p ON p.product_id = 1 + (pg_temp.h(o.order_id, 131, 240) + k * 61) % 240
WHERE k <= pg_temp.h(o.order_id, 130, 10) / 3;

UPDATE shop.orders o
SET total_amount = t.total
FROM (SELECT order_id, sum(quantity * unit_price - discount_amount) AS total
      FROM shop.order_items GROUP BY order_id) AS t
WHERE t.order_id = o.order_id;

-- A captured payment for every order that got past 'pending'; a failed
-- attempt before some of them; a refund for returned orders.
INSERT INTO shop.payments (payment_id, order_id, method, amount, paid_at, status)
SELECT row_number() OVER (ORDER BY order_id, paid_at, status), order_id, method, amount, paid_at, status
FROM (
    SELECT o.order_id, m.method, o.total_amount AS amount,
           o.ordered_at + interval '3 minutes' AS paid_at, 'captured' AS status
    FROM shop.orders o
    CROSS JOIN LATERAL (SELECT (ARRAY['card','card','card','card','paypal','paypal','paypal','bank_transfer','gift_card'])[1 + pg_temp.h(o.order_id, 141, 9)] AS method) AS m
    WHERE o.status NOT IN ('pending', 'cancelled')
    UNION ALL
    SELECT o.order_id, 'card', o.total_amount, o.ordered_at + interval '1 minute', 'failed'
    FROM shop.orders o
    WHERE pg_temp.h(o.order_id, 142, 100) < 6 OR o.status = 'cancelled' AND pg_temp.h(o.order_id, 142, 2) = 0
    UNION ALL
    SELECT o.order_id, 'card', o.total_amount, o.ordered_at + interval '18 days', 'refunded'
    FROM shop.orders o
    WHERE o.status = 'returned'
) AS p;

-- One parcel per order that left a warehouse.
INSERT INTO shop.shipments (shipment_id, order_id, warehouse_id, carrier, tracking_number, shipped_at, delivered_at)
SELECT row_number() OVER (ORDER BY o.order_id), o.order_id,
       (ARRAY[1,1,1,2,2,3,4,5,5,6])[1 + pg_temp.h(o.order_id, 151, 10)],
       c.carrier,
       upper(left(c.carrier, 3)) || lpad((o.order_id * 7919 % 1000000000)::text, 10, '0'),
       o.ordered_at + interval '1 day' + pg_temp.h(o.order_id, 152, 36) * interval '1 hour',
       CASE WHEN o.status IN ('delivered', 'returned')
            THEN o.ordered_at + interval '2 days' + pg_temp.h(o.order_id, 153, 96) * interval '1 hour' END
FROM shop.orders o
CROSS JOIN LATERAL (SELECT pg_temp.pick(ARRAY['DHL','DHL','UPS','DPD','GLS','PostNL','Colissimo','SEUR'], o.order_id, 150) AS carrier) AS c
WHERE o.status IN ('shipped', 'delivered', 'returned');

-- Returns: the first line of every returned order, and now and then a line of
-- a delivered one.
INSERT INTO shop.returns (return_id, order_item_id, requested_on, reason, refund_amount, status)
SELECT row_number() OVER (ORDER BY oi.order_item_id), oi.order_item_id,
       (o.ordered_at + interval '6 days')::date + pg_temp.h(oi.order_item_id, 161, 20),
       pg_temp.pick(ARRAY['Wrong size','Arrived damaged','Not as described','Changed my mind',
                          'Better price elsewhere','Defective after a week','Ordered by mistake'], oi.order_item_id, 162),
       oi.quantity * oi.unit_price - oi.discount_amount,
       CASE WHEN o.status = 'returned' THEN 'refunded'
            ELSE (ARRAY['requested','received','refunded','rejected'])[1 + pg_temp.h(oi.order_item_id, 163, 4)] END
FROM shop.order_items oi
JOIN shop.orders o USING (order_id)
WHERE (o.status = 'returned' AND oi.order_item_id = (SELECT min(x.order_item_id) FROM shop.order_items x WHERE x.order_id = o.order_id))
   OR (o.status = 'delivered' AND pg_temp.h(oi.order_item_id, 160, 100) < 2);

-- Reviews of delivered products by the customers who bought them.
INSERT INTO shop.reviews (review_id, product_id, customer_id, rating, title, body, created_at)
SELECT row_number() OVER (ORDER BY oi.order_item_id), oi.product_id, o.customer_id, r.rating,
       CASE r.rating
            WHEN 5 THEN pg_temp.pick(ARRAY['Absolutely love it','Best purchase this year','Perfect','Exceeded expectations'], oi.order_item_id, 172)
            WHEN 4 THEN pg_temp.pick(ARRAY['Very good','Great value for money','Does the job well'], oi.order_item_id, 172)
            WHEN 3 THEN pg_temp.pick(ARRAY['OK for the price','Average','Mixed feelings'], oi.order_item_id, 172)
            WHEN 2 THEN pg_temp.pick(ARRAY['Disappointed','Not great','Quality could be better'], oi.order_item_id, 172)
            ELSE pg_temp.pick(ARRAY['Broke after a week','Do not buy','Terrible quality'], oi.order_item_id, 172) END,
       CASE WHEN pg_temp.h(oi.order_item_id, 173, 3) > 0 THEN
            pg_temp.pick(ARRAY['Delivery was quick and the packaging was fine.',
                               'Exactly what the description says.',
                               'The colour is a bit different from the photos.',
                               'Would recommend to friends.',
                               'Stopped working after a few uses, support was helpful though.',
                               'Solid build, feels premium.',
                               'Instructions could be clearer.'], oi.order_item_id, 174) END,
       o.ordered_at + interval '5 days' + pg_temp.h(oi.order_item_id, 175, 30) * interval '1 day'
FROM shop.order_items oi
JOIN shop.orders o USING (order_id)
CROSS JOIN LATERAL (SELECT (ARRAY[1,2,3,3,4,4,4,5,5,5,5,5])[1 + pg_temp.h(oi.order_item_id, 171, 12)] AS rating) AS r
WHERE o.status = 'delivered' AND pg_temp.h(oi.order_item_id, 170, 100) < 22;

-- 600 carts; about half became orders.
INSERT INTO shop.carts (cart_id, customer_id, created_at, updated_at, converted_order_id)
SELECT i, c.customer_id, c.created, c.created + pg_temp.h(i, 183, 240) * interval '1 minute',
       CASE WHEN pg_temp.h(i, 182, 10) < 5 THEN
            (SELECT o.order_id FROM shop.orders o
              WHERE o.customer_id = c.customer_id AND o.ordered_at >= c.created
              ORDER BY o.ordered_at LIMIT 1) END
FROM generate_series(1, 600) AS i
CROSS JOIN LATERAL (
    SELECT 1 + pg_temp.h(i, 180, 900) AS customer_id,
           date_trunc('second', pg_temp.anchor() - pg_temp.h(i, 181, 730 * 24) * interval '1 hour') AS created
) AS c;

INSERT INTO shop.cart_items (cart_id, product_id, quantity, added_at)
SELECT DISTINCT ON (ct.cart_id, p) ct.cart_id, p, 1 + pg_temp.h(ct.cart_id * 4 + k, 192, 2),
       ct.created_at + k * interval '2 minutes'
FROM shop.carts ct
CROSS JOIN generate_series(0, 2) AS k
CROSS JOIN LATERAL (SELECT 1 + pg_temp.h(ct.cart_id * 4 + k, 191, 240) AS p) AS x
WHERE k <= pg_temp.h(ct.cart_id, 190, 3)
ORDER BY ct.cart_id, p, k;

------------------------------------------------------------------------------
-- support
------------------------------------------------------------------------------

INSERT INTO support.sla_policies (sla_policy_id, name, priority, first_response_hours, resolution_hours)
VALUES (1, 'Standard - Low', 'low', 48, 240),
       (2, 'Standard - Normal', 'normal', 24, 120),
       (3, 'Priority - High', 'high', 8, 48),
       (4, 'Critical - Urgent', 'urgent', 1, 8);

-- 30 agents: the first support-department employees.
INSERT INTO support.agents (agent_id, employee_id, display_name, team, languages, is_active)
SELECT row_number() OVER (ORDER BY e.employee_id), e.employee_id,
       e.first_name || ' ' || left(e.last_name, 1) || '.',
       (ARRAY['Orders','Payments','Technical','Returns'])[1 + pg_temp.h(e.employee_id, 201, 4)],
       CASE pg_temp.h(e.employee_id, 202, 5)
            WHEN 0 THEN ARRAY['en','de'] WHEN 1 THEN ARRAY['en','fr'] WHEN 2 THEN ARRAY['en','es','it']
            WHEN 3 THEN ARRAY['en','nl','de'] ELSE ARRAY['en'] END,
       e.termination_date IS NULL
FROM hr.employees e
WHERE e.department_id = 4
ORDER BY e.employee_id
LIMIT 30;

INSERT INTO support.tags (tag_id, name)
SELECT n, t FROM unnest(ARRAY['late-delivery','damaged-item','refund','invoice','login-problem','payment-failed',
                              'wrong-item','warranty','coupon','address-change','account-deletion','vip',
                              'complaint','feature-request','fraud-check']) WITH ORDINALITY AS u(t, n);

-- 2,000 tickets. Most are about an order of the customer's (order_id is a
-- plain column, not a foreign key).
INSERT INTO support.tickets (ticket_id, customer_id, order_id, assigned_agent_id, sla_policy_id, subject, channel,
                             status, opened_at, first_response_at, resolved_at)
SELECT t.i, t.customer_id, t.order_id,
       CASE WHEN t.status <> 'open' OR pg_temp.h(t.i, 213, 3) > 0 THEN 1 + pg_temp.h(t.i, 214, 30) END,
       t.sla, t.subject, t.channel, t.status, t.opened_at,
       CASE WHEN t.status <> 'open' THEN t.opened_at + pg_temp.h(t.i, 215, 30 * 60) * interval '1 minute' END,
       CASE WHEN t.status IN ('solved', 'closed') THEN t.opened_at + interval '2 hours' + pg_temp.h(t.i, 216, 120) * interval '1 hour' END
FROM (
    SELECT x.i, x.customer_id, o.order_id,
           (ARRAY[1,2,2,2,2,2,3,3,4])[1 + pg_temp.h(x.i, 211, 9)] AS sla,
           pg_temp.pick(CASE WHEN o.order_id IS NOT NULL THEN
                ARRAY['Where is my order?','Parcel arrived damaged','Wrong item delivered','Refund not received yet',
                      'Please change my delivery address','Invoice needed for my order','Coupon was not applied',
                      'Item missing from parcel','Return label request','Payment charged twice']
                ELSE ARRAY['Cannot log in to my account','Please delete my account','Question about warranty',
                           'Do you ship to Switzerland?','Newsletter unsubscribe not working','Product availability question'] END,
                x.i, 212) AS subject,
           (ARRAY['email','email','email','chat','chat','chat','phone','web_form'])[1 + pg_temp.h(x.i, 217, 8)] AS channel,
           coalesce(o.ordered_at + interval '1 day' + pg_temp.h(x.i, 218, 20 * 24) * interval '1 hour',
                    date_trunc('second', pg_temp.anchor() - pg_temp.h(x.i, 219, 730 * 24) * interval '1 hour')) AS opened_at,
           CASE WHEN coalesce(o.ordered_at, pg_temp.anchor() - interval '60 days') > pg_temp.anchor() - interval '10 days'
                THEN (ARRAY['open','open','pending','solved'])[1 + pg_temp.h(x.i, 220, 4)]
                ELSE (ARRAY['solved','solved','closed','closed','closed','closed','pending'])[1 + pg_temp.h(x.i, 220, 7)] END AS status
    FROM (
        SELECT i, (SELECT customer_id FROM shop.orders WHERE order_id = 1 + pg_temp.h(i, 210, 3200)) AS customer_id,
               CASE WHEN pg_temp.h(i, 209, 100) < 75 THEN 1 + pg_temp.h(i, 210, 3200) END AS order_ref
        FROM generate_series(1, 2000) AS i
    ) AS x
    LEFT JOIN shop.orders o ON o.order_id = x.order_ref
) AS t;
-- A ticket never opens after the anchor.
UPDATE support.tickets SET opened_at = pg_temp.anchor() - interval '3 hours', first_response_at = NULL,
                           resolved_at = NULL, status = 'open'
WHERE opened_at > pg_temp.anchor() - interval '3 hours';

-- The conversation: the customer's message, then alternating replies.
INSERT INTO support.ticket_comments (comment_id, ticket_id, author_agent_id, is_public, body, created_at)
SELECT row_number() OVER (ORDER BY t.ticket_id, k), t.ticket_id,
       CASE WHEN k % 2 = 1 THEN coalesce(t.assigned_agent_id, 1) END,
       NOT (k % 2 = 1 AND pg_temp.h(t.ticket_id * 5 + k, 222, 6) = 0),
       CASE WHEN k = 0 THEN 'Customer wrote: ' || t.subject
            WHEN k % 2 = 1 THEN pg_temp.pick(ARRAY['Thank you for contacting us. I have checked your order and will update you shortly.',
                                                   'I am sorry for the trouble. I have arranged a replacement.',
                                                   'The refund has been issued and should reach your account in 3-5 business days.',
                                                   'Internal note: escalated to the warehouse team.',
                                                   'Could you please send us a photo of the damaged item?'], t.ticket_id * 5 + k, 223)
            ELSE pg_temp.pick(ARRAY['Thanks, that helps.', 'I still have not received anything.',
                                    'Here is the photo you asked for.', 'Great, problem solved!'], t.ticket_id * 5 + k, 224) END,
       t.opened_at + k * interval '5 hours'
FROM support.tickets t
CROSS JOIN generate_series(0, 3) AS k
WHERE k <= pg_temp.h(t.ticket_id, 221, 4) AND (k = 0 OR t.status <> 'open');

INSERT INTO support.ticket_tags (ticket_id, tag_id)
SELECT DISTINCT t.ticket_id, 1 + pg_temp.h(t.ticket_id * 3 + k, 231, 15)
FROM support.tickets t
CROSS JOIN generate_series(0, 1) AS k
WHERE k <= pg_temp.h(t.ticket_id, 230, 2);

-- Surveys answered for about half the resolved tickets.
INSERT INTO support.satisfaction_surveys (survey_id, ticket_id, customer_id, score, comment, answered_at)
SELECT row_number() OVER (ORDER BY t.ticket_id), t.ticket_id, t.customer_id, s.score,
       CASE WHEN pg_temp.h(t.ticket_id, 242, 3) = 0 THEN
            CASE WHEN s.score >= 4 THEN 'Quick and friendly help.' WHEN s.score = 3 THEN 'Took a while but fixed.'
                 ELSE 'Nobody really solved my problem.' END END,
       t.resolved_at + pg_temp.h(t.ticket_id, 243, 72) * interval '1 hour'
FROM support.tickets t
CROSS JOIN LATERAL (SELECT (ARRAY[1,2,3,4,4,5,5,5,5])[1 + pg_temp.h(t.ticket_id, 241, 9)] AS score) AS s
WHERE t.resolved_at IS NOT NULL AND pg_temp.h(t.ticket_id, 240, 2) = 0;

------------------------------------------------------------------------------
-- finance
------------------------------------------------------------------------------

INSERT INTO finance.currencies (currency_code, name, symbol, decimals)
VALUES ('EUR', 'Euro', '€', 2), ('USD', 'US Dollar', '$', 2), ('GBP', 'Pound Sterling', '£', 2),
       ('CHF', 'Swiss Franc', 'CHF', 2), ('SEK', 'Swedish Krona', 'kr', 2), ('DKK', 'Danish Krone', 'kr', 2),
       ('PLN', 'Polish Złoty', 'zł', 2), ('CZK', 'Czech Koruna', 'Kč', 2);

-- Weekly rates for two years (a gentle deterministic wobble around a base).
INSERT INTO finance.exchange_rates (currency_code, rate_date, rate_to_eur)
SELECT c.code, date '2023-07-03' + 7 * w,
       CASE WHEN c.code = 'EUR' THEN 1
            ELSE round((c.base * (1 + 0.025 * sin(w / 9.0 + c.phase) + 0.01 * cos(w / 3.0)))::numeric, 6) END
FROM (VALUES ('EUR', 1.0, 0.0), ('USD', 0.92, 0.3), ('GBP', 1.17, 1.1), ('CHF', 1.04, 2.0),
             ('SEK', 0.087, 2.7), ('DKK', 0.134, 0.1), ('PLN', 0.23, 1.6), ('CZK', 0.040, 3.3)) AS c(code, base, phase)
CROSS JOIN generate_series(0, 103) AS w;

INSERT INTO finance.tax_rates (tax_rate_id, country_code, category, rate_percent, valid_from)
SELECT row_number() OVER (ORDER BY cc, cat), cc, cat, rate, date '2020-01-01'
FROM (VALUES ('DE', 'standard', 19.0), ('DE', 'reduced', 7.0), ('FR', 'standard', 20.0), ('FR', 'reduced', 5.5),
             ('NL', 'standard', 21.0), ('NL', 'reduced', 9.0), ('ES', 'standard', 21.0), ('ES', 'reduced', 10.0),
             ('IT', 'standard', 22.0), ('IT', 'reduced', 10.0), ('AT', 'standard', 20.0), ('AT', 'reduced', 10.0),
             ('IE', 'standard', 23.0), ('IE', 'reduced', 13.5), ('BE', 'standard', 21.0), ('BE', 'reduced', 6.0)) AS t(cc, cat, rate);

-- Chart of accounts (SKR-like numbering, English names).
INSERT INTO finance.accounts (account_id, account_number, name, account_type, parent_account_id)
VALUES
    (1, '1000', 'Assets', 'asset', NULL),
    (2, '1100', 'Cash at bank', 'asset', 1),
    (3, '1200', 'Accounts receivable', 'asset', 1),
    (4, '1300', 'Inventory', 'asset', 1),
    (5, '1400', 'Prepaid expenses', 'asset', 1),
    (6, '1500', 'Equipment', 'asset', 1),
    (7, '2000', 'Liabilities', 'liability', NULL),
    (8, '2100', 'Accounts payable', 'liability', 7),
    (9, '2200', 'VAT payable', 'liability', 7),
    (10, '2300', 'Accrued salaries', 'liability', 7),
    (11, '2400', 'Customer refunds payable', 'liability', 7),
    (12, '3000', 'Equity', 'equity', NULL),
    (13, '3100', 'Share capital', 'equity', 12),
    (14, '3200', 'Retained earnings', 'equity', 12),
    (15, '4000', 'Revenue', 'revenue', NULL),
    (16, '4100', 'Online sales revenue', 'revenue', 15),
    (17, '4200', 'Shipping fees charged', 'revenue', 15),
    (18, '4300', 'Returns and allowances', 'revenue', 15),
    (19, '5000', 'Cost of goods sold', 'expense', NULL),
    (20, '5100', 'Purchases of goods', 'expense', 19),
    (21, '5200', 'Inbound freight', 'expense', 19),
    (22, '6000', 'Operating expenses', 'expense', NULL),
    (23, '6100', 'Salaries and wages', 'expense', 22),
    (24, '6110', 'Social security contributions', 'expense', 22),
    (25, '6200', 'Rent', 'expense', 22),
    (26, '6300', 'Utilities', 'expense', 22),
    (27, '6400', 'Marketing and advertising', 'expense', 22),
    (28, '6500', 'Travel', 'expense', 22),
    (29, '6510', 'Meals and entertainment', 'expense', 22),
    (30, '6600', 'Software subscriptions', 'expense', 22),
    (31, '6700', 'Training', 'expense', 22),
    (32, '6800', 'Legal and consulting fees', 'expense', 22),
    (33, '6900', 'Outbound shipping costs', 'expense', 22),
    (34, '6950', 'Payment processing fees', 'expense', 22),
    (35, '7000', 'Other income and expenses', 'expense', NULL),
    (36, '7100', 'Bank charges', 'expense', 35),
    (37, '7200', 'Foreign exchange gains and losses', 'expense', 35),
    (38, '7300', 'Interest expense', 'expense', 35),
    (39, '7400', 'Depreciation', 'expense', 35),
    (40, '7500', 'Office supplies', 'expense', 22);

-- An invoice for every order that was paid; amounts split into net and 19% VAT.
INSERT INTO finance.invoices (invoice_id, invoice_number, customer_id, order_id, currency_code, issued_on, due_on,
                              paid_on, net_amount, tax_amount, status)
SELECT row_number() OVER (ORDER BY o.order_id),
       'INV-' || to_char(o.ordered_at, 'YYYY') || '-' || lpad(o.order_id::text, 6, '0'),
       o.customer_id, o.order_id,
       CASE WHEN pg_temp.h(o.order_id, 251, 100) < 92 THEN 'EUR'
            ELSE (ARRAY['USD','GBP','CHF','SEK','DKK','PLN','CZK'])[1 + pg_temp.h(o.order_id, 252, 7)] END,
       o.ordered_at::date, o.ordered_at::date + 30,
       CASE WHEN pay.paid_at IS NOT NULL AND pg_temp.h(o.order_id, 253, 100) >= 3 THEN pay.paid_at::date END,
       round(o.total_amount / 1.19, 2), o.total_amount - round(o.total_amount / 1.19, 2),
       CASE WHEN o.status = 'returned' THEN 'void'
            WHEN pay.paid_at IS NOT NULL AND pg_temp.h(o.order_id, 253, 100) >= 3 THEN 'paid'
            WHEN o.ordered_at::date + 30 < date '2025-06-30' THEN 'overdue'
            ELSE 'issued' END
FROM shop.orders o
LEFT JOIN LATERAL (SELECT min(p.paid_at) AS paid_at FROM shop.payments p
                    WHERE p.order_id = o.order_id AND p.status = 'captured') AS pay ON true
WHERE o.status NOT IN ('pending', 'cancelled');

INSERT INTO finance.invoice_lines (invoice_line_id, invoice_id, line_number, description, quantity, unit_price, tax_rate_id)
SELECT row_number() OVER (ORDER BY i.invoice_id, oi.order_item_id), i.invoice_id,
       row_number() OVER (PARTITION BY i.invoice_id ORDER BY oi.order_item_id),
       p.name || ' (' || p.sku || ')', oi.quantity,
       round((oi.unit_price - oi.discount_amount / oi.quantity) / 1.19, 2),
       (SELECT tax_rate_id FROM finance.tax_rates WHERE country_code = 'DE' AND category = CASE WHEN p.category_id IN (16, 17) THEN 'reduced' ELSE 'standard' END)
FROM finance.invoices i
JOIN shop.order_items oi ON oi.order_id = i.order_id
JOIN shop.products p USING (product_id);

-- Journal: each invoice debits receivables and credits revenue and VAT;
-- monthly salaries, rent and marketing per cost centre.
INSERT INTO finance.ledger_entries (entry_id, account_id, posted_on, debit, credit, invoice_id, cost_center, memo)
SELECT row_number() OVER (ORDER BY posted_on, ord, account_id), account_id, posted_on, debit, credit, invoice_id, cost_center, memo
FROM (
    SELECT i.issued_on AS posted_on, i.invoice_id AS ord, 3 AS account_id, i.net_amount + i.tax_amount AS debit, 0 AS credit,
           i.invoice_id, NULL::text AS cost_center, 'Invoice ' || i.invoice_number AS memo
    FROM finance.invoices i
    UNION ALL
    SELECT i.issued_on, i.invoice_id, 16, 0, i.net_amount, i.invoice_id, NULL, 'Revenue ' || i.invoice_number
    FROM finance.invoices i
    UNION ALL
    SELECT i.issued_on, i.invoice_id, 9, 0, i.tax_amount, i.invoice_id, NULL, 'VAT ' || i.invoice_number
    FROM finance.invoices i
    UNION ALL
    SELECT (date '2023-07-31' + m * interval '1 month')::date, 1000000 + d.department_id, a.account_id,
           round((CASE a.account_id WHEN 23 THEN 18000 WHEN 25 THEN 3500 ELSE 2500 END)
                 * (0.7 + pg_temp.frac(m * 100 + d.department_id * 3 + a.account_id, 261) * 0.6), 2),
           0, NULL, d.cost_center,
           a.name || ' ' || to_char(date '2023-07-01' + m * interval '1 month', 'Mon YYYY') || ' ' || d.name
    FROM generate_series(0, 23) AS m
    CROSS JOIN hr.departments d
    JOIN finance.accounts a ON a.account_id IN (23, 25, 27)
    WHERE a.account_id <> 27 OR d.department_id IN (3, 5)
) AS j;

-- Budgets per department and expense account for fiscal years 2024 and 2025.
INSERT INTO finance.budgets (budget_id, fiscal_year, department_id, account_id, planned_amount, approved)
SELECT row_number() OVER (ORDER BY y, d.department_id, a), y, d.department_id, a,
       round((CASE a WHEN 23 THEN 220000 WHEN 25 THEN 42000 WHEN 27 THEN 60000 WHEN 28 THEN 15000 WHEN 30 THEN 12000 ELSE 8000 END)
             * (0.6 + pg_temp.frac(y * 1000 + d.department_id * 50 + a, 271) * 0.8), -2),
       y = 2024 OR pg_temp.h(d.department_id * 50 + a, 272, 4) > 0
FROM generate_series(2024, 2025) AS y
CROSS JOIN hr.departments d
CROSS JOIN unnest(ARRAY[23, 25, 27, 28, 30, 31]) AS a;

-- 420 employee expense claims.
INSERT INTO finance.expense_claims (claim_id, employee_id, account_id, currency_code, amount, submitted_on, status, description)
SELECT i, 1 + pg_temp.h(i, 281, 260), c.account_id,
       CASE WHEN pg_temp.h(i, 282, 10) < 8 THEN 'EUR' ELSE (ARRAY['GBP','CHF','SEK','USD'])[1 + pg_temp.h(i, 283, 4)] END,
       round((c.base * (0.3 + pg_temp.frac(i, 284) * 1.7))::numeric, 2),
       date '2025-06-28' - pg_temp.h(i, 285, 720),
       (ARRAY['paid','paid','paid','paid','approved','submitted','rejected'])[1 + pg_temp.h(i, 286, 7)],
       c.what
FROM generate_series(1, 420) AS i
CROSS JOIN LATERAL (
    SELECT v.account_id, v.base, v.what FROM (VALUES
        (0, 28, 420.0, 'Train and hotel for customer visit'),
        (1, 28, 650.0, 'Flight to supplier meeting'),
        (2, 29, 85.0, 'Team lunch with candidates'),
        (3, 29, 140.0, 'Dinner with key account'),
        (4, 40, 45.0, 'Office supplies'),
        (5, 31, 300.0, 'Conference ticket'),
        (6, 30, 25.0, 'Software licence, one month')
    ) AS v(k, account_id, base, what)
    WHERE v.k = pg_temp.h(i, 280, 7)
) AS c;
