-- Atrium's sample database: a small company with an online shop, HR, a support
-- desk and finance, in four schemas and 42 tables. It exists so that choosing
-- the right tables for a question is not trivial: several tables mention
-- customers, orders, employees or amounts, some joins cross schemas, and a few
-- tables join by convention only (no declared foreign key), as in real
-- databases.
--
-- Loaded by deploy/load-sample.sh into the database atrium_demo.

CREATE SCHEMA shop;
CREATE SCHEMA hr;
CREATE SCHEMA support;
CREATE SCHEMA finance;

COMMENT ON SCHEMA shop IS 'Online shop: catalogue, customers, orders, payments, fulfilment and reviews.';
COMMENT ON SCHEMA hr IS 'Human resources: employees, organisation, pay, leave, reviews and training.';
COMMENT ON SCHEMA support IS 'Customer support desk: tickets, conversations, agents and service levels.';
COMMENT ON SCHEMA finance IS 'Finance: chart of accounts, invoices, general ledger, budgets, currencies and taxes.';

------------------------------------------------------------------------------
-- hr (first: shop and support refer to employees and locations)
------------------------------------------------------------------------------

CREATE TABLE hr.locations (
    location_id   integer PRIMARY KEY,
    city          text NOT NULL,
    country_code  char(2) NOT NULL,
    street        text NOT NULL,
    postal_code   text NOT NULL,
    opened_on     date NOT NULL
);
COMMENT ON TABLE hr.locations IS 'Company offices and sites where employees work.';
COMMENT ON COLUMN hr.locations.country_code IS 'ISO 3166-1 alpha-2 country code.';
COMMENT ON COLUMN hr.locations.opened_on IS 'Date the site opened.';

CREATE TABLE hr.departments (
    department_id  integer PRIMARY KEY,
    name           text NOT NULL UNIQUE,
    location_id    integer NOT NULL REFERENCES hr.locations,
    manager_id     integer,
    cost_center    text NOT NULL UNIQUE
);
COMMENT ON TABLE hr.departments IS 'Organisational units of the company, each at one location and led by a manager.';
COMMENT ON COLUMN hr.departments.manager_id IS 'Employee who heads the department.';
COMMENT ON COLUMN hr.departments.cost_center IS 'Cost centre code used by finance for budgets and ledger postings.';

CREATE TABLE hr.jobs (
    job_id      integer PRIMARY KEY,
    title       text NOT NULL UNIQUE,
    job_family  text NOT NULL,
    min_salary  numeric(10,2) NOT NULL,
    max_salary  numeric(10,2) NOT NULL,
    CHECK (min_salary <= max_salary)
);
COMMENT ON TABLE hr.jobs IS 'Job titles with their job family and salary band.';
COMMENT ON COLUMN hr.jobs.job_family IS 'Broad group of related jobs, e.g. Engineering, Sales, Support.';
COMMENT ON COLUMN hr.jobs.min_salary IS 'Lower bound of the yearly salary band in EUR.';
COMMENT ON COLUMN hr.jobs.max_salary IS 'Upper bound of the yearly salary band in EUR.';

CREATE TABLE hr.employees (
    employee_id    integer PRIMARY KEY,
    first_name     text NOT NULL,
    last_name      text NOT NULL,
    email          text NOT NULL UNIQUE,
    phone          text,
    hire_date      date NOT NULL,
    termination_date date,
    job_id         integer NOT NULL REFERENCES hr.jobs,
    department_id  integer NOT NULL REFERENCES hr.departments,
    manager_id     integer REFERENCES hr.employees,
    employment_type text NOT NULL CHECK (employment_type IN ('full-time', 'part-time', 'contractor'))
);
COMMENT ON TABLE hr.employees IS 'Everyone who works or worked for the company, with job, department and manager.';
COMMENT ON COLUMN hr.employees.termination_date IS 'Last working day; NULL while the employee is still with the company.';
COMMENT ON COLUMN hr.employees.manager_id IS 'The employee''s line manager (another employee).';
COMMENT ON COLUMN hr.employees.employment_type IS 'full-time, part-time or contractor.';

ALTER TABLE hr.departments
    ADD FOREIGN KEY (manager_id) REFERENCES hr.employees DEFERRABLE INITIALLY DEFERRED;

CREATE TABLE hr.salaries (
    salary_id      integer PRIMARY KEY,
    employee_id    integer NOT NULL REFERENCES hr.employees,
    amount         numeric(10,2) NOT NULL,
    currency_code  char(3) NOT NULL DEFAULT 'EUR',
    valid_from     date NOT NULL,
    valid_to       date,
    UNIQUE (employee_id, valid_from)
);
COMMENT ON TABLE hr.salaries IS 'Salary history: one row per pay change of an employee.';
COMMENT ON COLUMN hr.salaries.amount IS 'Gross yearly salary.';
COMMENT ON COLUMN hr.salaries.valid_to IS 'Last day this salary applied; NULL for the current salary.';

CREATE TABLE hr.leave_requests (
    leave_request_id integer PRIMARY KEY,
    employee_id    integer NOT NULL REFERENCES hr.employees,
    leave_type     text NOT NULL CHECK (leave_type IN ('vacation', 'sick', 'parental', 'unpaid', 'training')),
    start_date     date NOT NULL,
    end_date       date NOT NULL,
    status         text NOT NULL CHECK (status IN ('requested', 'approved', 'rejected', 'cancelled')),
    approved_by    integer REFERENCES hr.employees,
    CHECK (start_date <= end_date)
);
COMMENT ON TABLE hr.leave_requests IS 'Requests for time off (vacation, sick leave, parental leave...) and their approval.';
COMMENT ON COLUMN hr.leave_requests.approved_by IS 'Manager who approved or rejected the request.';

CREATE TABLE hr.performance_reviews (
    review_id      integer PRIMARY KEY,
    employee_id    integer NOT NULL REFERENCES hr.employees,
    reviewer_id    integer NOT NULL REFERENCES hr.employees,
    review_period  text NOT NULL,
    rating         smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
    summary        text NOT NULL
);
COMMENT ON TABLE hr.performance_reviews IS 'Half-yearly performance reviews of employees by their managers.';
COMMENT ON COLUMN hr.performance_reviews.review_period IS 'Review cycle, e.g. 2024-H2.';
COMMENT ON COLUMN hr.performance_reviews.rating IS '1 (below expectations) to 5 (outstanding).';

CREATE TABLE hr.training_courses (
    course_id      integer PRIMARY KEY,
    title          text NOT NULL UNIQUE,
    provider       text NOT NULL,
    hours          smallint NOT NULL,
    cost           numeric(8,2) NOT NULL
);
COMMENT ON TABLE hr.training_courses IS 'Training courses employees can take.';
COMMENT ON COLUMN hr.training_courses.cost IS 'Cost per participant in EUR.';

CREATE TABLE hr.course_enrollments (
    employee_id    integer NOT NULL REFERENCES hr.employees,
    course_id      integer NOT NULL REFERENCES hr.training_courses,
    enrolled_on    date NOT NULL,
    completed_on   date,
    score          smallint CHECK (score BETWEEN 0 AND 100),
    PRIMARY KEY (employee_id, course_id)
);
COMMENT ON TABLE hr.course_enrollments IS 'Which employees took which training courses (many-to-many), with completion and score.';

------------------------------------------------------------------------------
-- shop
------------------------------------------------------------------------------

CREATE TABLE shop.categories (
    category_id    integer PRIMARY KEY,
    name           text NOT NULL UNIQUE,
    parent_id      integer REFERENCES shop.categories,
    description    text
);
COMMENT ON TABLE shop.categories IS 'Product categories, as a tree (top-level categories have no parent).';

CREATE TABLE shop.suppliers (
    supplier_id    integer PRIMARY KEY,
    company_name   text NOT NULL UNIQUE,
    contact_name   text NOT NULL,
    email          text NOT NULL,
    country_code   char(2) NOT NULL,
    rating         numeric(2,1)
);
COMMENT ON TABLE shop.suppliers IS 'Companies that supply the products the shop sells.';
COMMENT ON COLUMN shop.suppliers.rating IS 'Purchasing team''s supplier rating from 1.0 to 5.0.';

CREATE TABLE shop.products (
    product_id     integer PRIMARY KEY,
    sku            text NOT NULL UNIQUE,
    name           text NOT NULL,
    category_id    integer NOT NULL REFERENCES shop.categories,
    list_price     numeric(10,2) NOT NULL,
    unit_cost      numeric(10,2) NOT NULL,
    weight_kg      numeric(6,2),
    is_active      boolean NOT NULL DEFAULT true,
    launched_on    date NOT NULL
);
COMMENT ON TABLE shop.products IS 'Products in the shop''s catalogue with price and cost.';
COMMENT ON COLUMN shop.products.sku IS 'Stock keeping unit: the product code printed on labels.';
COMMENT ON COLUMN shop.products.list_price IS 'Current selling price in EUR, tax included.';
COMMENT ON COLUMN shop.products.unit_cost IS 'Purchase cost per unit in EUR.';
COMMENT ON COLUMN shop.products.is_active IS 'False once the product is discontinued.';

CREATE TABLE shop.product_suppliers (
    product_id     integer NOT NULL REFERENCES shop.products,
    supplier_id    integer NOT NULL REFERENCES shop.suppliers,
    supplier_sku   text NOT NULL,
    lead_time_days smallint NOT NULL,
    is_preferred   boolean NOT NULL DEFAULT false,
    PRIMARY KEY (product_id, supplier_id)
);
COMMENT ON TABLE shop.product_suppliers IS 'Which suppliers deliver which products (many-to-many), with lead time.';

CREATE TABLE shop.warehouses (
    warehouse_id   integer PRIMARY KEY,
    name           text NOT NULL UNIQUE,
    location_id    integer NOT NULL REFERENCES hr.locations,
    capacity_units integer NOT NULL
);
COMMENT ON TABLE shop.warehouses IS 'Warehouses that hold stock and ship orders; each is at a company location.';

CREATE TABLE shop.inventory (
    warehouse_id   integer NOT NULL REFERENCES shop.warehouses,
    product_id     integer NOT NULL REFERENCES shop.products,
    quantity_on_hand integer NOT NULL,
    reorder_level  integer NOT NULL,
    last_counted_on date NOT NULL,
    PRIMARY KEY (warehouse_id, product_id)
);
COMMENT ON TABLE shop.inventory IS 'Stock level of each product in each warehouse.';
COMMENT ON COLUMN shop.inventory.reorder_level IS 'When quantity_on_hand falls below this, purchasing reorders.';

CREATE TABLE shop.customers (
    customer_id    integer PRIMARY KEY,
    first_name     text NOT NULL,
    last_name      text NOT NULL,
    email          text NOT NULL UNIQUE,
    phone          text,
    signup_date    date NOT NULL,
    loyalty_tier   text NOT NULL CHECK (loyalty_tier IN ('none', 'silver', 'gold', 'platinum')),
    marketing_opt_in boolean NOT NULL
);
COMMENT ON TABLE shop.customers IS 'People who have an account with the online shop.';
COMMENT ON COLUMN shop.customers.loyalty_tier IS 'Loyalty programme tier: none, silver, gold or platinum.';
COMMENT ON COLUMN shop.customers.marketing_opt_in IS 'Whether the customer agreed to receive marketing e-mail.';

CREATE TABLE shop.addresses (
    address_id     integer PRIMARY KEY,
    customer_id    integer NOT NULL REFERENCES shop.customers,
    kind           text NOT NULL CHECK (kind IN ('billing', 'shipping')),
    street         text NOT NULL,
    city           text NOT NULL,
    postal_code    text NOT NULL,
    country_code   char(2) NOT NULL
);
COMMENT ON TABLE shop.addresses IS 'Billing and shipping addresses of customers.';

CREATE TABLE shop.coupons (
    coupon_id      integer PRIMARY KEY,
    code           text NOT NULL UNIQUE,
    discount_percent smallint NOT NULL CHECK (discount_percent BETWEEN 1 AND 90),
    valid_from     date NOT NULL,
    valid_to       date NOT NULL,
    max_uses       integer
);
COMMENT ON TABLE shop.coupons IS 'Discount codes customers can enter at checkout.';

CREATE TABLE shop.orders (
    order_id       integer PRIMARY KEY,
    customer_id    integer NOT NULL REFERENCES shop.customers,
    shipping_address_id integer NOT NULL REFERENCES shop.addresses,
    coupon_id      integer REFERENCES shop.coupons,
    ordered_at     timestamptz NOT NULL,
    status         text NOT NULL CHECK (status IN ('pending', 'paid', 'shipped', 'delivered', 'cancelled', 'returned')),
    channel        text NOT NULL CHECK (channel IN ('web', 'mobile', 'phone')),
    total_amount   numeric(12,2) NOT NULL
);
COMMENT ON TABLE shop.orders IS 'Customer orders placed in the online shop.';
COMMENT ON COLUMN shop.orders.status IS 'pending, paid, shipped, delivered, cancelled or returned.';
COMMENT ON COLUMN shop.orders.channel IS 'Where the order was placed: web, mobile app or phone.';
COMMENT ON COLUMN shop.orders.total_amount IS 'Order total in EUR after discounts, tax included.';

CREATE TABLE shop.order_items (
    order_item_id  integer PRIMARY KEY,
    order_id       integer NOT NULL REFERENCES shop.orders,
    product_id     integer NOT NULL REFERENCES shop.products,
    quantity       integer NOT NULL CHECK (quantity > 0),
    unit_price     numeric(10,2) NOT NULL,
    discount_amount numeric(10,2) NOT NULL DEFAULT 0
);
COMMENT ON TABLE shop.order_items IS 'Order lines: which products, how many and at what price.';
COMMENT ON COLUMN shop.order_items.unit_price IS 'Price per unit charged on this order (the list price at the time).';

CREATE TABLE shop.payments (
    payment_id     integer PRIMARY KEY,
    order_id       integer NOT NULL REFERENCES shop.orders,
    method         text NOT NULL CHECK (method IN ('card', 'paypal', 'bank_transfer', 'gift_card')),
    amount         numeric(12,2) NOT NULL,
    paid_at        timestamptz NOT NULL,
    status         text NOT NULL CHECK (status IN ('captured', 'refunded', 'failed'))
);
COMMENT ON TABLE shop.payments IS 'Payments received for orders (card, PayPal, bank transfer, gift card).';

CREATE TABLE shop.shipments (
    shipment_id    integer PRIMARY KEY,
    order_id       integer NOT NULL REFERENCES shop.orders,
    warehouse_id   integer NOT NULL REFERENCES shop.warehouses,
    carrier        text NOT NULL,
    tracking_number text NOT NULL UNIQUE,
    shipped_at     timestamptz NOT NULL,
    delivered_at   timestamptz
);
COMMENT ON TABLE shop.shipments IS 'Parcels sent to customers: carrier, tracking number, shipping and delivery times.';

CREATE TABLE shop.returns (
    return_id      integer PRIMARY KEY,
    order_item_id  integer NOT NULL REFERENCES shop.order_items,
    requested_on   date NOT NULL,
    reason         text NOT NULL,
    refund_amount  numeric(10,2) NOT NULL,
    status         text NOT NULL CHECK (status IN ('requested', 'received', 'refunded', 'rejected'))
);
COMMENT ON TABLE shop.returns IS 'Returned order lines, the reason given and the refund.';

CREATE TABLE shop.reviews (
    review_id      integer PRIMARY KEY,
    product_id     integer NOT NULL REFERENCES shop.products,
    customer_id    integer NOT NULL REFERENCES shop.customers,
    rating         smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
    title          text NOT NULL,
    body           text,
    created_at     timestamptz NOT NULL
);
COMMENT ON TABLE shop.reviews IS 'Product reviews and star ratings written by customers.';
COMMENT ON COLUMN shop.reviews.rating IS 'Stars from 1 to 5.';

CREATE TABLE shop.carts (
    cart_id        integer PRIMARY KEY,
    customer_id    integer NOT NULL REFERENCES shop.customers,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    converted_order_id integer REFERENCES shop.orders
);
COMMENT ON TABLE shop.carts IS 'Shopping carts; a cart that never became an order is abandoned.';
COMMENT ON COLUMN shop.carts.converted_order_id IS 'The order the cart became at checkout; NULL for an abandoned cart.';

CREATE TABLE shop.cart_items (
    cart_id        integer NOT NULL REFERENCES shop.carts,
    product_id     integer NOT NULL REFERENCES shop.products,
    quantity       integer NOT NULL CHECK (quantity > 0),
    added_at       timestamptz NOT NULL,
    PRIMARY KEY (cart_id, product_id)
);
COMMENT ON TABLE shop.cart_items IS 'Products currently or last in each shopping cart.';

------------------------------------------------------------------------------
-- support
------------------------------------------------------------------------------

CREATE TABLE support.sla_policies (
    sla_policy_id  integer PRIMARY KEY,
    name           text NOT NULL UNIQUE,
    priority       text NOT NULL UNIQUE CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    first_response_hours smallint NOT NULL,
    resolution_hours smallint NOT NULL
);
COMMENT ON TABLE support.sla_policies IS 'Service level agreements: response and resolution targets per ticket priority.';

CREATE TABLE support.agents (
    agent_id       integer PRIMARY KEY,
    employee_id    integer NOT NULL UNIQUE REFERENCES hr.employees,
    display_name   text NOT NULL,
    team           text NOT NULL,
    languages      text[] NOT NULL,
    is_active      boolean NOT NULL
);
COMMENT ON TABLE support.agents IS 'Support agents who answer tickets; each is an employee.';
COMMENT ON COLUMN support.agents.team IS 'Support team: Orders, Payments, Technical or Returns.';
COMMENT ON COLUMN support.agents.languages IS 'Languages the agent answers in (ISO 639-1 codes).';

CREATE TABLE support.tickets (
    ticket_id      integer PRIMARY KEY,
    customer_id    integer NOT NULL REFERENCES shop.customers,
    order_id       integer,
    assigned_agent_id integer REFERENCES support.agents,
    sla_policy_id  integer NOT NULL REFERENCES support.sla_policies,
    subject        text NOT NULL,
    channel        text NOT NULL CHECK (channel IN ('email', 'chat', 'phone', 'web_form')),
    status         text NOT NULL CHECK (status IN ('open', 'pending', 'solved', 'closed')),
    opened_at      timestamptz NOT NULL,
    first_response_at timestamptz,
    resolved_at    timestamptz
);
COMMENT ON TABLE support.tickets IS 'Customer support tickets: who asked, about what, which agent handles it and when it was answered and resolved.';
COMMENT ON COLUMN support.tickets.order_id IS 'The shop order the ticket is about, if any (shop.orders.order_id; not enforced).';
COMMENT ON COLUMN support.tickets.status IS 'open, pending (waiting for the customer), solved or closed.';

CREATE TABLE support.ticket_comments (
    comment_id     integer PRIMARY KEY,
    ticket_id      integer NOT NULL REFERENCES support.tickets,
    author_agent_id integer REFERENCES support.agents,
    is_public      boolean NOT NULL,
    body           text NOT NULL,
    created_at     timestamptz NOT NULL
);
COMMENT ON TABLE support.ticket_comments IS 'Messages on a ticket: customer messages (no agent), agent replies and internal notes.';
COMMENT ON COLUMN support.ticket_comments.author_agent_id IS 'Agent who wrote the comment; NULL when the customer wrote it.';
COMMENT ON COLUMN support.ticket_comments.is_public IS 'False for internal notes the customer does not see.';

CREATE TABLE support.tags (
    tag_id         integer PRIMARY KEY,
    name           text NOT NULL UNIQUE
);
COMMENT ON TABLE support.tags IS 'Labels used to classify tickets.';

CREATE TABLE support.ticket_tags (
    ticket_id      integer NOT NULL REFERENCES support.tickets,
    tag_id         integer NOT NULL REFERENCES support.tags,
    PRIMARY KEY (ticket_id, tag_id)
);
COMMENT ON TABLE support.ticket_tags IS 'Tags on tickets (many-to-many).';

-- No declared foreign keys: this table is filled by an external survey tool,
-- so its joins must be inferred from names and values.
CREATE TABLE support.satisfaction_surveys (
    survey_id      integer PRIMARY KEY,
    ticket_id      integer NOT NULL,
    customer_id    integer NOT NULL,
    score          smallint NOT NULL,
    comment        text,
    answered_at    timestamptz NOT NULL
);
COMMENT ON TABLE support.satisfaction_surveys IS 'Customer satisfaction (CSAT) survey answers after a ticket is solved, imported from the survey tool.';
COMMENT ON COLUMN support.satisfaction_surveys.score IS 'Satisfaction from 1 (very unhappy) to 5 (very happy).';

------------------------------------------------------------------------------
-- finance
------------------------------------------------------------------------------

CREATE TABLE finance.currencies (
    currency_code  char(3) PRIMARY KEY,
    name           text NOT NULL,
    symbol         text NOT NULL,
    decimals       smallint NOT NULL
);
COMMENT ON TABLE finance.currencies IS 'Currencies the company invoices or pays in (ISO 4217).';

CREATE TABLE finance.exchange_rates (
    currency_code  char(3) NOT NULL REFERENCES finance.currencies,
    rate_date      date NOT NULL,
    rate_to_eur    numeric(12,6) NOT NULL,
    PRIMARY KEY (currency_code, rate_date)
);
COMMENT ON TABLE finance.exchange_rates IS 'Weekly exchange rates: how many EUR one unit of the currency is worth.';

CREATE TABLE finance.tax_rates (
    tax_rate_id    integer PRIMARY KEY,
    country_code   char(2) NOT NULL,
    category       text NOT NULL CHECK (category IN ('standard', 'reduced')),
    rate_percent   numeric(5,2) NOT NULL,
    valid_from     date NOT NULL,
    UNIQUE (country_code, category, valid_from)
);
COMMENT ON TABLE finance.tax_rates IS 'Value added tax (VAT) rates by country and category.';

CREATE TABLE finance.accounts (
    account_id     integer PRIMARY KEY,
    account_number text NOT NULL UNIQUE,
    name           text NOT NULL,
    account_type   text NOT NULL CHECK (account_type IN ('asset', 'liability', 'equity', 'revenue', 'expense')),
    parent_account_id integer REFERENCES finance.accounts
);
COMMENT ON TABLE finance.accounts IS 'Chart of accounts of the general ledger.';
COMMENT ON COLUMN finance.accounts.account_type IS 'asset, liability, equity, revenue or expense.';

CREATE TABLE finance.invoices (
    invoice_id     integer PRIMARY KEY,
    invoice_number text NOT NULL UNIQUE,
    customer_id    integer NOT NULL REFERENCES shop.customers,
    order_id       integer,
    currency_code  char(3) NOT NULL REFERENCES finance.currencies,
    issued_on      date NOT NULL,
    due_on         date NOT NULL,
    paid_on        date,
    net_amount     numeric(12,2) NOT NULL,
    tax_amount     numeric(12,2) NOT NULL,
    status         text NOT NULL CHECK (status IN ('draft', 'issued', 'paid', 'overdue', 'void'))
);
COMMENT ON TABLE finance.invoices IS 'Invoices sent to customers, with amounts, due date and payment status.';
COMMENT ON COLUMN finance.invoices.order_id IS 'The shop order invoiced (shop.orders.order_id; not enforced).';
COMMENT ON COLUMN finance.invoices.paid_on IS 'Date the invoice was settled; NULL while unpaid.';

CREATE TABLE finance.invoice_lines (
    invoice_line_id integer PRIMARY KEY,
    invoice_id     integer NOT NULL REFERENCES finance.invoices,
    line_number    smallint NOT NULL,
    description    text NOT NULL,
    quantity       integer NOT NULL,
    unit_price     numeric(10,2) NOT NULL,
    tax_rate_id    integer NOT NULL REFERENCES finance.tax_rates,
    UNIQUE (invoice_id, line_number)
);
COMMENT ON TABLE finance.invoice_lines IS 'Lines of an invoice: what was billed, quantity, price and the VAT rate applied.';

CREATE TABLE finance.ledger_entries (
    entry_id       integer PRIMARY KEY,
    account_id     integer NOT NULL REFERENCES finance.accounts,
    posted_on      date NOT NULL,
    debit          numeric(12,2) NOT NULL DEFAULT 0,
    credit         numeric(12,2) NOT NULL DEFAULT 0,
    invoice_id     integer REFERENCES finance.invoices,
    cost_center    text,
    memo           text NOT NULL
);
COMMENT ON TABLE finance.ledger_entries IS 'General ledger postings (double-entry journal lines).';
COMMENT ON COLUMN finance.ledger_entries.cost_center IS 'Department cost centre (hr.departments.cost_center) for expenses.';

-- No declared foreign keys: budgets are uploaded from a spreadsheet each year.
CREATE TABLE finance.budgets (
    budget_id      integer PRIMARY KEY,
    fiscal_year    smallint NOT NULL,
    department_id  integer NOT NULL,
    account_id     integer NOT NULL,
    planned_amount numeric(12,2) NOT NULL,
    approved       boolean NOT NULL
);
COMMENT ON TABLE finance.budgets IS 'Planned yearly spending per department and expense account.';
COMMENT ON COLUMN finance.budgets.department_id IS 'Department the budget belongs to (hr.departments).';
COMMENT ON COLUMN finance.budgets.account_id IS 'Expense account budgeted (finance.accounts).';

CREATE TABLE finance.expense_claims (
    claim_id       integer PRIMARY KEY,
    employee_id    integer NOT NULL REFERENCES hr.employees,
    account_id     integer NOT NULL REFERENCES finance.accounts,
    currency_code  char(3) NOT NULL REFERENCES finance.currencies,
    amount         numeric(10,2) NOT NULL,
    submitted_on   date NOT NULL,
    status         text NOT NULL CHECK (status IN ('submitted', 'approved', 'paid', 'rejected')),
    description    text NOT NULL
);
COMMENT ON TABLE finance.expense_claims IS 'Employee expense claims (travel, meals, equipment) and their reimbursement status.';
